#include "sampler/beam_search.h"

#include "common/pause_gate.h"
#include "common/rng.h"
#include "common/stopwatch.h"
#include "sampler/successors.h"

#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <numeric>
#include <stdexcept>
#include <thread>
#include <unordered_map>
#include <unordered_set>

namespace schedforge::sampler {

namespace sf = schedforge::featurize;

namespace {

using Clock = std::chrono::steady_clock;

struct State {
    sf::LoopNest nest;
    std::vector<sf::StageFeatures> features;
    double cost = 0;
    std::shared_ptr<const State> parent;
    size_t order = 0;    // among the step's children, in generation order (the ranking's tie-break)
    bool pruned = false; // by a rule that needs features
};
using StatePtr = std::shared_ptr<const State>;

struct Child {
    StatePtr state;
    double rank_cost = 0; // cost with the hash penalty
    size_t index = 0;     // generation order, the tie-break
};

// search.price_pending_updates: an update stage whose own decision is still ahead keeps the
// generator's placeholder tiling (untiled, vectorized), which spills every accumulator of a
// reduction; its decision may keep them in registers, so until then it is priced as if it did.
// The placeholder's spills (two thirds of a matmul prefix's price) rank the sites and tiles of a
// reduction's Func by an artifact the next decision removes: under a trial feature change the
// beam lost matmul's register blocks that way. `decided`: the number of decisions taken.
void price_pending_updates(std::vector<sf::StageFeatures> &features, const std::vector<Decision> &decisions,
                           size_t decided) {
    for (size_t d = decided; d < decisions.size(); d++) {
        if (decisions[d].stage == 0) continue;
        for (sf::StageFeatures &s : features) {
            if (s.node == decisions[d].node && s.stage == decisions[d].stage) s.features.accumulator_bytes_spilled = 0;
        }
    }
}

// The goal's prefix after each decision, replayed through the generator, and its cost. A choice
// the generator does not offer (a tiling thinned away, a site a rule forbids) is spliced into a
// child of the prefix so that the later steps can still be priced.
std::vector<sf::LoopNest> replay_goal(const sf::FunctionDAG &dag, const Halide::Target &target, CostModel &model,
                                      const SuccessorGenerator &generator, const sf::CacheSizes &caches,
                                      bool pending_in_registers, FollowPath &follow) {
    const std::vector<Decision> &decisions = generator.decisions();
    follow.steps.assign(decisions.size(), FollowStep{});
    std::vector<sf::LoopNest> prefixes;
    sf::LoopNest prefix(dag);
    for (size_t d = 0; d < decisions.size(); d++) {
        const Decision dec = decisions[d];
        const size_t k = size_t(dec.stage);
        FollowStep &step = follow.steps[d];
        step.node = dec.node;
        step.stage = dec.stage;
        const sf::FuncSchedule &want = follow.goal.funcs.at(size_t(dec.node));
        // An inlined Func has no tilings.
        auto tiling = [k](const sf::FuncSchedule &f) { return k < f.stages.size() ? &f.stages[k] : nullptr; };
        auto chosen = [&](const sf::LoopNest &n) {
            const sf::FuncSchedule &f = n.funcs[size_t(dec.node)];
            const sf::StageTiling *have = tiling(f), *goal = tiling(want);
            return (have && goal ? *have == *goal : have == goal) &&
                   (k > 0 || (f.compute == want.compute && f.store == want.store));
        };
        std::vector<sf::LoopNest> children = generator.successors(prefix, int(d));
        const auto it = std::find_if(children.begin(), children.end(), chosen);
        step.generated = it != children.end();
        if (step.generated) {
            prefix = std::move(*it);
        } else {
            if (!children.empty()) prefix = std::move(children.front());
            sf::FuncSchedule &f = prefix.funcs[size_t(dec.node)];
            if (k == 0) {
                f.compute = want.compute;
                f.store = want.store;
            }
            if (f.stages.size() != want.stages.size()) f.stages = want.stages;
            if (k < f.stages.size()) f.stages[k] = want.stages[k];
        }
        std::vector<sf::StageFeatures> features = sf::compute_schedule_features(dag, prefix, target, caches);
        if (pending_in_registers) price_pending_updates(features, decisions, d + 1);
        for (const sf::StageFeatures &s : features) {
            if (s.scheduled && s.node == dec.node && generator.pruned(prefix, s)) step.pruned = true;
        }
        std::vector<double> cost;
        model.evaluate({&features}, cost);
        step.cost = cost.at(0);
        prefixes.push_back(prefix);
    }
    return prefixes;
}

void hash_in(uint64_t &h, int64_t v) { h = common::mix64(h ^ (uint64_t(v) + 0x9e3779b97f4a7c15ull + (h << 6))); }

// The end of the run of twins that starts at `a` in ascending `costs`.
size_t twin_run_end(const std::vector<double> &costs, size_t a, double resolution) {
    const double top = costs[a] * (1 + resolution);
    size_t b = a + 1;
    while (b < costs.size() && costs[b] <= top) b++;
    return b;
}

} // namespace

uint64_t structure_hash(const sf::LoopNest &nest, int depth) {
    uint64_t h = 0;
    for (size_t n = 0; n < nest.funcs.size(); n++) {
        const sf::FuncSchedule &fs = nest.funcs[n];
        hash_in(h, fs.compute.kind);
        if (fs.compute.kind == sf::Site::At) {
            hash_in(h, fs.compute.stage.node);
            hash_in(h, fs.compute.stage.stage);
            hash_in(h, fs.compute.level);
        }
        for (const sf::StageTiling &t : fs.stages) {
            hash_in(h, t.levels());
            hash_in(h, t.vector_loop);
            hash_in(h, t.parallel);
            hash_in(h, t.unroll);
            for (int k = 0; k < std::min(depth, int(t.tiles.size())); k++) {
                for (int64_t e : t.tiles[size_t(k)]) hash_in(h, e);
            }
        }
    }
    return h;
}

std::vector<size_t> twin_order(const std::vector<double> &costs, int max_twins, double resolution) {
    std::vector<size_t> order;
    order.reserve(costs.size());
    const size_t m = size_t(std::max(max_twins, 1));
    for (size_t a = 0, b; a < costs.size(); a = b) {
        b = twin_run_end(costs, a, resolution);
        const size_t n = b - a;
        if (n <= m) {
            for (size_t k = a; k < b; k++) order.push_back(k);
            continue;
        }
        // The first half in order, the others at the middles of equal parts of the rest.
        const size_t first = m / 2, rest = n - first, picks = m - first;
        std::vector<bool> taken(n, false);
        for (size_t i = 0; i < m; i++) {
            const size_t k = i < first ? i : first + ((2 * (i - first) + 1) * rest) / (2 * picks);
            taken[k] = true;
            order.push_back(a + k);
        }
        for (size_t k = 0; k < n; k++) {
            if (!taken[k]) order.push_back(a + k);
        }
    }
    return order;
}

std::vector<std::pair<size_t, size_t>> crowded_twin_runs(const std::vector<double> &costs, int max_twins, int beam_size,
                                                         double resolution) {
    std::vector<std::pair<size_t, size_t>> crowded;
    const size_t limit = size_t(std::max(max_twins, 1));
    size_t reach = 0;
    for (size_t a = 0, b; a < costs.size() && reach < size_t(beam_size); a = b) {
        b = twin_run_end(costs, a, resolution);
        if (b - a > limit) crowded.emplace_back(a, b);
        reach += std::min(b - a, limit);
    }
    return crowded;
}

std::vector<size_t> lookahead_order(const std::vector<double> &ahead, double resolution) {
    std::vector<size_t> sorted(ahead.size());
    std::iota(sorted.begin(), sorted.end(), size_t(0));
    std::stable_sort(sorted.begin(), sorted.end(), [&](size_t x, size_t y) { return ahead[x] < ahead[y]; });
    std::vector<size_t> order, again;
    for (size_t i : sorted) {
        const bool twin = std::any_of(order.begin(), order.end(), [&](size_t k) {
            return ahead[i] == ahead[k] || std::abs(ahead[i] - ahead[k]) <= resolution * ahead[k];
        });
        (twin ? again : order).push_back(i);
    }
    order.insert(order.end(), again.begin(), again.end());
    return order;
}

SearchResult beam_search(const sf::FunctionDAG &dag, const Halide::Target &target, CostModel &model,
                         const SearchOptions &options_in, FollowPath *follow) {
    SearchOptions options = options_in;
    options.cores = options.target_cores();
    const sf::CacheSizes caches = options.cache_sizes();
    const SuccessorGenerator generator(dag, target, options);
    const std::vector<Decision> &decisions = generator.decisions();
    if (decisions.empty()) throw std::invalid_argument("the pipeline has no Func to schedule");
    model.set_pipeline(dag, options.cores);
    tbb::task_arena arena(options.threads > 0 ? options.threads : tbb::task_arena::automatic);
    common::Rng rng(common::derive_seed(options.seed, 0x5ea4c4));
    const std::vector<sf::LoopNest> goal_prefixes =
        follow ? replay_goal(dag, target, model, generator, caches, options.price_pending_updates, *follow)
               : std::vector<sf::LoopNest>();

    SearchResult result;
    StatePtr best;
    std::vector<StatePtr> final_beam; // the last pass's
    // permitted[d]: hashes (at the previous pass's depth) of the states the last pass kept at step d.
    std::vector<std::unordered_set<uint64_t>> permitted(decisions.size());
    for (int pass = 0; pass < options.passes; pass++) {
        const auto pass_start = Clock::now();
        const int depth = pass + 1;
        std::vector<StatePtr> beam{std::make_shared<State>(State{sf::LoopNest(dag), {}, 0, nullptr})};
        for (size_t d = 0; d < decisions.size(); d++) {
            // Expand every beam state, in parallel, keeping the order.
            std::vector<std::vector<sf::LoopNest>> expanded(beam.size());
            std::vector<std::vector<uint32_t>> runs(beam.size());
            arena.execute([&] {
                tbb::parallel_for(size_t(0), beam.size(), [&](size_t i) {
                    common::pause_point(); // the benchmark runner may be timing a schedule
                    expanded[i] = generator.successors(beam[i]->nest, int(d), &runs[i]);
                });
            });
            std::vector<size_t> first_order(beam.size() + 1, 0);
            for (size_t i = 0; i < beam.size(); i++) first_order[i + 1] = first_order[i] + expanded[i].size();
            auto child = [&](size_t i, size_t k) {
                return std::make_shared<State>(State{std::move(expanded[i][k]), {}, 0, beam[i], first_order[i] + k});
            };
            // Featurizes `batch` in parallel and keeps the states no pruning rule that needs
            // features rejects. Stages the decision cannot affect keep their parent's features (the memo).
            // `at`: the decision the batch's states took (d, or d + 1 for the twins' lookahead).
            auto featurize_and_prune = [&](std::vector<std::shared_ptr<State>> &batch, size_t at) {
                result.stats.states_generated += int64_t(batch.size());
                auto t = Clock::now();
                std::vector<int64_t> reused(batch.size(), 0);
                arena.execute([&] {
                    tbb::parallel_for(size_t(0), batch.size(), [&](size_t i) {
                        common::pause_point();
                        State &c = *batch[i];
                        c.features = options.memoize_features
                                         ? sf::update_schedule_features(dag, c.nest, target, c.parent->features,
                                                                        decisions[at].node, &reused[i], caches)
                                         : sf::compute_schedule_features(dag, c.nest, target, caches);
                        if (options.price_pending_updates) price_pending_updates(c.features, decisions, at + 1);
                    });
                });
                result.stats.featurize_seconds += seconds_since(t);
                std::vector<std::shared_ptr<State>> legal;
                for (size_t i = 0; i < batch.size(); i++) {
                    bool ok = true;
                    int64_t scheduled = 0;
                    for (const sf::StageFeatures &s : batch[i]->features) {
                        if (!s.scheduled) continue;
                        scheduled++;
                        if (s.node == decisions[at].node && generator.pruned(batch[i]->nest, s)) ok = false;
                    }
                    result.stats.stages_featurized += scheduled - reused[i];
                    result.stats.feature_cache_hits += reused[i];
                    batch[i]->pruned = !ok;
                    if (ok) legal.push_back(batch[i]);
                }
                result.stats.states_pruned += int64_t(batch.size() - legal.size());
                return legal;
            };
            auto cost = [&](const std::vector<std::shared_ptr<State>> &batch) {
                auto t = Clock::now();
                std::vector<const std::vector<sf::StageFeatures> *> features;
                for (const auto &c : batch) features.push_back(&c->features);
                std::vector<double> costs;
                model.evaluate(features, costs);
                for (size_t i = 0; i < batch.size(); i++) batch[i]->cost = costs[i];
                result.stats.cost_seconds += seconds_since(t);
                result.stats.cost_evaluations += int64_t(batch.size());
            };
            // Whether the last pass's final beam took this child's structure (or there is none).
            auto permitted_here = [&](const State &c) {
                return pass == 0 || permitted[d].empty() || permitted[d].count(structure_hash(c.nest, pass));
            };
            // Coarse: the first child of every run.
            std::vector<std::shared_ptr<State>> children;
            std::vector<std::pair<size_t, size_t>> origin; // (beam state, child) of each
            for (size_t i = 0; i < beam.size(); i++) {
                for (size_t k = 0; k < expanded[i].size(); k++) {
                    if (k > 0 && runs[i][k] == runs[i][k - 1]) continue;
                    children.push_back(child(i, k));
                    origin.emplace_back(i, k);
                }
            }
            std::vector<std::shared_ptr<State>> legal = featurize_and_prune(children, d);
            const bool all_pruned = legal.empty();
            if (all_pruned) legal = children; // every option is pruned: keep them all
            cost(legal);
            // Fine: the rest of the runs of the cheapest coarse children, in generation order.
            // Runs whose first child the last pass did not permit come after the others, and runs
            // whose first child is pruned last (another of theirs may be legal).
            if (options.tiling_stride > 1 && options.refined_runs > 0) {
                std::vector<int> tier(children.size(), 0);
                for (size_t j = 0; j < children.size(); j++) {
                    if (children[j]->pruned && !all_pruned) {
                        tier[j] = 2;
                    } else if (!permitted_here(*children[j])) {
                        tier[j] = 1;
                    }
                }
                std::vector<size_t> order(children.size());
                std::iota(order.begin(), order.end(), size_t(0));
                const size_t refined = std::min(order.size(), size_t(options.refined_runs));
                std::partial_sort(order.begin(), order.begin() + ptrdiff_t(refined), order.end(),
                                  [&](size_t a, size_t b) {
                                      if (tier[a] != tier[b]) return tier[a] < tier[b];
                                      if (tier[a] < 2 && children[a]->cost != children[b]->cost)
                                          return children[a]->cost < children[b]->cost;
                                      return a < b;
                                  });
                order.resize(refined);
                std::sort(order.begin(), order.end());
                std::vector<std::shared_ptr<State>> siblings;
                for (size_t j : order) {
                    const auto [i, k] = origin[j];
                    for (size_t m = k + 1; m < expanded[i].size() && runs[i][m] == runs[i][k]; m++)
                        siblings.push_back(child(i, m));
                }
                std::vector<std::shared_ptr<State>> fine = featurize_and_prune(siblings, d);
                // Pruned coarse children stand in only while no child is legal.
                if (all_pruned && !fine.empty()) legal.clear();
                if (all_pruned && fine.empty()) fine = std::move(siblings);
                cost(fine);
                legal.insert(legal.end(), fine.begin(), fine.end());
                std::sort(legal.begin(), legal.end(),
                          [](const std::shared_ptr<State> &a, const std::shared_ptr<State> &b) {
                              return a->order < b->order;
                          });
            }
            // Candidates: permitted by the last pass, cheapest first, penalized per better twin.
            std::vector<Child> ranked;
            for (size_t i = 0; i < legal.size(); i++) {
                if (!permitted_here(*legal[i])) continue;
                ranked.push_back({legal[i], legal[i]->cost, i});
            }
            if (ranked.empty()) {
                for (size_t i = 0; i < legal.size(); i++) ranked.push_back({legal[i], legal[i]->cost, i});
            }
            auto by_rank = [](const Child &a, const Child &b) {
                return a.rank_cost != b.rank_cost ? a.rank_cost < b.rank_cost : a.index < b.index;
            };
            std::sort(ranked.begin(), ranked.end(), by_rank);
            // The penalty spreads a pass's beam over structures for the finer passes to refine; a
            // single pass has none to refine, and there it only drops the cheaper tilings of a
            // structure (lens_blur's output tiling: 2.6x slower with it).
            if (options.passes > 1 || options.single_pass_hash_penalty) {
                std::unordered_map<uint64_t, int> twins;
                for (Child &c : ranked) {
                    int &seen = twins[structure_hash(c.state->nest, depth)];
                    for (int k = 0; k < seen; k++) c.rank_cost *= options.hash_penalty;
                    seen++;
                }
                std::sort(ranked.begin(), ranked.end(), by_rank);
            }
            // Fill the next beam, dropping each candidate with probability 1 - dropout. At most
            // max_cost_twins states of one cost (within cost_resolution) are kept: variants of a
            // cheap Func's tiling, all of equal cost, would otherwise fill the beam with a single
            // choice of every earlier decision. More than one, as equal costs now can still lead
            // to different costs later (a tiling decides where producers can go).
            auto ranked_costs = [&] { // ascending: what the twin rules read
                std::vector<double> costs;
                for (const Child &c : ranked) costs.push_back(c.rank_cost);
                return costs;
            };
            if (options.spread_cost_twins && options.twin_lookahead == 0 && options.max_cost_twins > 0) {
                const std::vector<double> costs = ranked_costs();
                std::vector<Child> spread;
                for (size_t k : twin_order(costs, options.max_cost_twins, options.cost_resolution))
                    spread.push_back(ranked[k]);
                ranked = std::move(spread);
            }
            // Twins the beam cannot all keep go in the order of their cheapest child at the next
            // decision: a tile priced before the producers inside it are placed ties with its
            // neighbours, and what it leaves those producers is what tells them apart.
            if (options.twin_lookahead > 0 && options.max_cost_twins > 0 && d + 1 < decisions.size()) {
                const std::vector<double> costs = ranked_costs();
                // Of each crowded run, twin_lookahead twins (as twin_order spreads them) are looked at.
                std::vector<std::vector<size_t>> looked; // ranked indices, per crowded run
                std::vector<size_t> members;
                const auto crowded =
                    crowded_twin_runs(costs, options.max_cost_twins, options.beam_size, options.cost_resolution);
                for (const auto &[a, b] : crowded) {
                    const std::vector<double> run(costs.begin() + ptrdiff_t(a), costs.begin() + ptrdiff_t(b));
                    std::vector<size_t> order = twin_order(run, options.twin_lookahead, options.cost_resolution);
                    order.resize(std::min(order.size(), size_t(options.twin_lookahead)));
                    for (size_t &k : order) k += a;
                    members.insert(members.end(), order.begin(), order.end());
                    looked.push_back(std::move(order));
                }
                // The coarse children (first of each run of tilings) of every member, as a step prices them.
                std::vector<std::vector<sf::LoopNest>> ahead(members.size());
                std::vector<std::vector<uint32_t>> ahead_runs(members.size());
                arena.execute([&] {
                    tbb::parallel_for(size_t(0), members.size(), [&](size_t j) {
                        common::pause_point();
                        ahead[j] = generator.successors(ranked[members[j]].state->nest, int(d + 1), &ahead_runs[j]);
                    });
                });
                std::vector<std::shared_ptr<State>> probes;
                for (size_t j = 0; j < members.size(); j++) {
                    for (size_t k = 0; k < ahead[j].size(); k++) {
                        if (k > 0 && ahead_runs[j][k] == ahead_runs[j][k - 1]) continue;
                        probes.push_back(
                            std::make_shared<State>(State{std::move(ahead[j][k]), {}, 0, ranked[members[j]].state, j}));
                    }
                }
                result.stats.lookahead_states += int64_t(probes.size());
                std::vector<std::shared_ptr<State>> legal_probes = featurize_and_prune(probes, d + 1);
                cost(legal_probes);
                std::unordered_map<const State *, double> cheapest;
                for (const auto &p : legal_probes) {
                    auto [it, fresh] = cheapest.try_emplace(p->parent.get(), p->cost);
                    if (!fresh) it->second = std::min(it->second, p->cost);
                }
                // Each crowded run: its looked-at twins in lookahead order, then the rest in their order.
                for (size_t r = 0; r < crowded.size(); r++) {
                    const auto [a, b] = crowded[r];
                    std::vector<double> best;
                    for (size_t k : looked[r]) {
                        const auto it = cheapest.find(ranked[k].state.get());
                        best.push_back(it == cheapest.end() ? std::numeric_limits<double>::infinity() : it->second);
                    }
                    std::vector<Child> run;
                    std::vector<bool> placed(b - a, false);
                    for (size_t i : lookahead_order(best, options.cost_resolution)) {
                        run.push_back(ranked[looked[r][i]]);
                        placed[looked[r][i] - a] = true;
                    }
                    for (size_t k = a; k < b; k++) {
                        if (!placed[k - a]) run.push_back(ranked[k]);
                    }
                    std::copy(run.begin(), run.end(), ranked.begin() + ptrdiff_t(a));
                }
            }
            std::vector<StatePtr> next;
            auto too_many_twins = [&](const Child &c) {
                return std::count_if(next.begin(), next.end(), [&](const StatePtr &k) {
                           return std::abs(k->cost - c.state->cost) <= options.cost_resolution * k->cost;
                       }) >= options.max_cost_twins;
            };
            for (const Child &c : ranked) {
                if (int(next.size()) >= options.beam_size) break;
                if (options.max_cost_twins > 0 && too_many_twins(c)) continue;
                if (options.dropout >= 1 || rng.chance(options.dropout)) next.push_back(c.state);
            }
            if (next.empty()) next.push_back(ranked.front().state);
            if (follow) { // where the goal's prefix stands (the last pass's figures stay)
                FollowStep &step = follow->steps[d];
                step.candidates = int64_t(ranked.size());
                step.rank = -1;
                step.kept = false;
                for (size_t j = 0; j < ranked.size(); j++) {
                    if (!(ranked[j].state->nest == goal_prefixes[d])) continue;
                    step.rank = int64_t(j);
                    step.kept = std::find(next.begin(), next.end(), ranked[j].state) != next.end();
                    break;
                }
                const auto [lo, hi] = std::minmax_element(
                    next.begin(), next.end(), [](const StatePtr &a, const StatePtr &b) { return a->cost < b->cost; });
                step.beam_best = (*lo)->cost;
                step.beam_cutoff = (*hi)->cost;
            }
            beam = std::move(next);
        }
        // The pass's best, and the paths its final beam took, for the next pass.
        const StatePtr pass_best = *std::min_element(
            beam.begin(), beam.end(), [](const StatePtr &a, const StatePtr &b) { return a->cost < b->cost; });
        if (!best || pass_best->cost < best->cost) best = pass_best;
        for (auto &p : permitted) p.clear();
        for (const StatePtr &s : beam) {
            size_t d = decisions.size();
            for (const State *a = s.get(); a->parent; a = a->parent.get())
                permitted[--d].insert(structure_hash(a->nest, depth));
        }
        result.stats.pass_seconds.push_back(seconds_since(pass_start));
        result.stats.pass_best_cost.push_back(pass_best->cost);
        final_beam = std::move(beam);
    }
    for (const StatePtr &s : final_beam) result.finalists.push_back({s->nest, s->cost});
    std::stable_sort(result.finalists.begin(), result.finalists.end(),
                     [](const SearchResult::Finalist &a, const SearchResult::Finalist &b) { return a.cost < b.cost; });
    result.nest = best->nest;
    result.cost = best->cost;
    result.features = best->features;
    return result;
}

} // namespace schedforge::sampler
