#include "datagen/refeaturize.h"

#include "common/errors.h"
#include "datagen/stored.h"
#include "datasets/operations.h"
#include "datasets/reader.h"
#include "datasets/writer.h"
#include "featurize/function_dag.h"
#include "featurize/pipeline_features.h"
#include "featurize/schedule_features.h"

#include <filesystem>
#include <vector>

namespace schedforge::datagen {

namespace ds = datasets;
namespace sf = featurize;

RefeaturizeReport refeaturize_dataset(const std::string &input, const std::string &out,
                                      const std::function<void(uint64_t, uint64_t)> &progress) {
    std::error_code ec;
    if (std::filesystem::exists(out, ec)) throw UserError(out + ": already exists (remove it or choose another name)");
    const auto reader = ds::DatasetReader::open(input);
    ds::FileInfo info = reader->info();
    if (info.schema_version < 3) {
        throw UserError(input + ": schema version " + std::to_string(info.schema_version) +
                        " stores no loop nests to refeaturize from (version 3 on does)");
    }
    const std::optional<gen::GeneratorConfig> generator = recorded_generator(info.config, input);
    const Halide::Target target(info.target);
    const sf::CacheSizes caches = recorded_cache_sizes(info.hardware); // the machine that timed them
    info.pipeline_feature_version = sf::PipelineFeatures::version();
    info.pipeline_feature_names = sf::PipelineFeatures::names();
    info.schedule_feature_version = sf::ScheduleFeatures::version();
    info.schedule_feature_names = sf::ScheduleFeatures::names();
    // The producer measured; the features are this build's (an earlier recompute's note is
    // replaced, so that a file refeaturized again and again names only the latest).
    info.producer = without_recompute_notes(info.producer) + recompute_note();

    // Schedules by pipeline row, in file order.
    const std::vector<ds::ScheduleRecord> summaries = reader->schedule_summaries();
    std::vector<std::vector<uint64_t>> by_pipeline(reader->num_pipelines());
    for (uint64_t s = 0; s < summaries.size(); s++) by_pipeline.at(summaries[s].pipeline_row).push_back(s);

    RefeaturizeReport report;
    ds::write_via_partial(out, [&](const std::string &partial) {
        auto writer = ds::DatasetWriter::create(partial, info, ds::WriteMode::Bulk);
        for (uint64_t row = 0; row < reader->num_pipelines(); row++) {
            const std::string where = input + ": pipeline row " + std::to_string(row);
            ds::PipelineRecord p = reader->pipeline(row);
            const BuiltSubject rebuilt = stored_subject(p, generator, where).build();
            const sf::FunctionDAG dag = sf::FunctionDAG::build(rebuilt.pipeline);
            const uint64_t new_row = writer->add_pipeline(with_current_features(p, dag, where));
            report.pipelines++;
            for (uint64_t s : by_pipeline[row]) {
                ds::ScheduleRecord rec = reader->schedule(s);
                rec.pipeline_row = new_row;
                if (rec.features.empty()) {
                    report.without_features++;
                } else if (rec.nest.empty()) { // e.g. a merge with files before schema version 3
                    throw UserError(where + ", schedule row " + std::to_string(s) +
                                    ": features but no stored loop nest to recompute them from");
                } else {
                    rec.features = stored_nest_features(dag, rec.nest, target, caches,
                                                        where + ", schedule row " + std::to_string(s));
                    report.refeaturized++;
                }
                writer->add_schedule(rec);
                report.schedules++;
            }
            if (progress) progress(row + 1, reader->num_pipelines());
        }
        writer->close();
    });
    return report;
}

} // namespace schedforge::datagen
