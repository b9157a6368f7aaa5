// Calibrating the manual cost model to a machine: its 28 coefficients fitted to measured
// runtimes, in seconds, not the hours a learned model takes.
//
// A state's manual cost is linear in the coefficients (cost = sum_i c_i * F_i, F_i summed over
// its stages by manual_cost_factors), so fitting is a non-negative least-squares problem. The
// fit minimizes the relative error of the predicted runtimes, each pipeline weighing the same
// whatever its schedule count, with a ridge pulling each coefficient towards its starting value
// (terms the data never exercises keep theirs). It is solved by projected coordinate descent
// over coefficients scaled by their starting values (the terms' magnitudes differ by twelve
// orders), then reweighted a few times by the current predictions, which moves the fit from
// relative towards logarithmic error (|log(P/M)|, what ranking and R^2 of logs reward).
#pragma once

#include "featurize/cost_terms.h"
#include "trainer/metrics.h"
#include "trainer/training_data.h"

#include <array>
#include <vector>

namespace schedforge::sampler {

using Coefficients = std::array<double, featurize::kNumCostTerms>;

struct CalibrationOptions {
    double ridge = 0.01;   // weight of (c_i / start_i - 1)^2 per coefficient, relative to one pipeline
    int reweightings = 4;  // rounds of reweighting by the current predictions
    int ranking_steps = 0; // then steps of the ranking refinement (0 = least squares only)
    // Coefficients held fixed instead of fitted, nanoseconds per unit (< 0: fitted with the
    // others): the page-fault term's per fresh byte (measure_page_fault_cost), the library-call
    // term's per sinf-equivalent call (measure_library_call_cost). A machine's price of either
    // can be an order of magnitude from the reference kind's, and a probe measures it directly.
    double page_fault_cost = -1;
    double library_call_cost = -1;
    // False: fit nothing; the starting coefficients with the fixed ones above put in (the
    // built-ins with this machine's measured prices).
    bool fit = true;
};

// What a byte of freshly mapped memory costs on this machine beyond writing it, in nanoseconds:
// mapping, writing and unmapping a pipeline-sized live set against writing memory kept between
// runs. Tens of milliseconds.
double measure_page_fault_cost();

// What one call into the C math library costs on this machine, in nanoseconds: glibc's sinf
// (Halide 14 calls it lane by lane for sin; library_calls counts other functions in its units),
// on arguments spread over one period, called through a pointer so no vector version replaces
// it. Larger arguments take glibc's slower range reduction (up to 2x). Tens of milliseconds.
double measure_library_call_cost();

// The manual model's predicted runtime, in seconds (coefficients are nanoseconds per unit), of
// schedule `s` of a pipeline of the training data.
double manual_prediction(const trainer::TrainingPipeline &p, size_t s, const Coefficients &c);

// The factors each coefficient multiplies, per stage of schedule `s` (the parallel speedup and
// operations per point applied; zeros for a stage without features): the manual model's
// prediction in nanoseconds is the sum over stages of their dot products with the coefficients.
std::vector<Coefficients> stage_factors(const trainer::TrainingPipeline &p, size_t s);

// The model's metrics on `data` with coefficients `c` (trainer/metrics.h, throughput loss).
trainer::Metrics manual_metrics(const trainer::TrainingData &data, const Coefficients &c);

// Coefficients fitted to `data`, starting from (and pulled towards) `start`. UserError when the
// data holds no schedule.
Coefficients calibrate(const trainer::TrainingData &data, const Coefficients &start,
                       const CalibrationOptions &options = {});

} // namespace schedforge::sampler
