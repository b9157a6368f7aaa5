#include "sampler/search_options.h"

#include "common/host_caches.h"
#include "common/yaml_reader.h"
#include "featurize/gpu_features.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <thread>

extern char **environ;

namespace schedforge::sampler {

namespace {

// The manual model's coefficients, nanoseconds per unit of each term: calibrated on this
// project's reference machine kind (configs/search/calibrated/amd-epyc-avx512-2core.yaml, fitted
// to random pipelines, not the apps); configs/search/default.yaml says what each one prices.
constexpr std::array<double, featurize::kNumCostTerms> kDefaultCoefficients = {
    0.00426543,  0,           0.00261178, 0.0477051, // compute: inlined lanes, (unused), vector lanes, scalars (per op)
    0.668861,    0.00243044,                         // lines and bytes read per realization
    0.0196011,   0.0450077,   0.260351,              // vector loads, scalar loads per scalar, scalar loads per vector
    5.41802e-06, 6.12493e-06, 0.0311669,  0.029044,  // unique bytes and lines per scalar and per vector
    0.00122311,  0.0883621,                          // unique bytes and lines per task
    5.99919,     1.04054,     0.459237,              // lines written: parallel, output, other
    0.0396274,   0.0221364,   0.0109442,             // bytes stored: parallel, output, other
    1.00712,                                         // false sharing
    0.0159962,                                       // page faults: per fresh byte of a large intermediate
    16,                                              // mallocs: per heap realization (refit alone, version 10)
    7487.52,     89.8474,                            // parallel launches and tasks
    0.000958672,                                     // working set bytes
    0.00214317,                                      // bytes read past the cache
    0.0537183,                                       // bytes read from memory
    2.06439,                                         // math library calls (sinf-equivalents)
    0.0123731};                                      // accumulator bytes spilled past L1

} // namespace

SearchOptions::SearchOptions() : coefficients(kDefaultCoefficients) {}

namespace {

// This machine's L2 and its share of the L3; the built-in sizes where Linux does not say.
featurize::CacheSizes host_cache_sizes() {
    const std::vector<common::HostCache> caches = common::host_caches();
    auto unified = [&](int level) {
        for (const common::HostCache &c : caches) {
            if (c.level == level && c.type == "Unified" && c.size_bytes > 0) return &c;
        }
        return static_cast<const common::HostCache *>(nullptr);
    };
    const common::HostCache *l2 = unified(2), *l3 = unified(3);
    // The cores sharing the L3: the CPUs sharing it over those sharing a core's L2 (SMT siblings).
    const int threads_per_core = l2 && l2->shared_cpus > 0 ? l2->shared_cpus : 1;
    const int cores = l3 && l3->shared_cpus > 0 ? l3->shared_cpus / threads_per_core : 1;
    return featurize::machine_cache_sizes(l2 ? double(l2->size_bytes) : 0, l3 ? double(l3->size_bytes) : 0, cores);
}

} // namespace

featurize::CacheSizes SearchOptions::cache_sizes() const {
    static const featurize::CacheSizes host = host_cache_sizes();
    featurize::CacheSizes sizes = host;
    if (core_cache_bytes > 0) sizes.core_bytes = core_cache_bytes;
    if (shared_cache_bytes_per_core > 0) sizes.shared_bytes_per_core = shared_cache_bytes_per_core;
    sizes.threads = target_cores();
    return sizes;
}

int SearchOptions::target_cores() const {
    return cores > 0 ? cores : std::max(1, int(std::thread::hardware_concurrency()));
}

void SearchOptions::validate(const std::string &source) const {
    auto bad = [&](const std::string &what) { yaml::fail(source, what); };
    if (beam_size < 1) bad("beam_size must be at least 1, got " + std::to_string(beam_size));
    if (passes < 1) bad("passes must be at least 1, got " + std::to_string(passes));
    if (!(dropout > 0 && dropout <= 1)) bad("dropout (the chance of keeping a state) must be in (0, 1]");
    if (cores < 0) bad("cores must not be negative");
    if (!(core_cache_bytes >= 0) || !(shared_cache_bytes_per_core >= 0)) {
        bad("core_cache_bytes and shared_cache_bytes_per_core must not be negative (0: this machine's)");
    }
    if (threads < 0) bad("threads must not be negative");
    if (max_tilings < 1) bad("max_tilings must be at least 1");
    if (gpu_beam_size < 1) bad("gpu_beam_size must be at least 1");
    if (gpu_schedules != "rules" && gpu_schedules != "search")
        bad("gpu_schedules must be 'rules' or 'search', got '" + gpu_schedules + "'");
    if (!gpu_device.empty()) {
        try {
            featurize::gpu_device_named(gpu_device);
        } catch (const std::invalid_argument &e) {
            bad(std::string("gpu_device: ") + e.what());
        }
    }
    if (tiling_stride < 1) bad("tiling_stride must be at least 1 (1: every tiling is costed)");
    if (refined_runs < 0) bad("refined_runs must not be negative");
    if (hash_penalty < 1) bad("hash_penalty must be at least 1");
    if (max_cost_twins < 0) bad("max_cost_twins must not be negative (0: no limit)");
    if (twin_lookahead < 0) bad("twin_lookahead must not be negative (0: off)");
    if (!(cost_resolution >= 0 && cost_resolution < 1)) bad("cost_resolution must be in [0, 1)");
    if (pruning.min_tasks_per_core <= 0 || pruning.max_tasks_per_core < pruning.min_tasks_per_core) {
        bad("pruning: need 0 < min_tasks_per_core <= max_tasks_per_core");
    }
    if (pruning.max_recompute < 0) bad("pruning.max_recompute must not be negative (0 switches it off)");
    if (pruning.max_serial_root_points < 0)
        bad("pruning.max_serial_root_points must not be negative (0 switches it off)");
    if (!(pruning.expansion >= 1)) bad("pruning.expansion must be at least 1");
    if (pruning.max_inner_realization_bytes < 0) {
        bad("pruning.max_inner_realization_bytes must not be negative (0 switches it off)");
    }
    if (space.max_tile_shapes < 1) bad("space.max_tile_shapes must be at least 1");
    if (space.max_inner_tilings < 0) bad("space.max_inner_tilings must not be negative (0: no inner tiles)");
    if (space.max_unroll_points < 0) bad("space.max_unroll_points must not be negative (0: never unroll)");
    if (space.vector_loops < 1) bad("space.vector_loops must be at least 1");
    for (size_t i = 0; i < coefficients.size(); i++) {
        if (!(coefficients[i] >= 0) || !std::isfinite(coefficients[i])) {
            bad(std::string("cost_model.coefficients.") + featurize::cost_term_names()[i] +
                " must be a finite number >= 0");
        }
    }
}

double dropout_for_greedy_chance(double greedy_chance, int decisions) {
    return decisions > 0 ? std::pow(greedy_chance, 1.0 / double(decisions)) : 1.0;
}

SearchOptions parse_search_options(const std::string &yaml_text, const std::string &source, SearchOptions o) {
    using yaml::MapReader;
    const YAML::Node root = yaml::parse(yaml_text, source);
    auto integer = [&](const YAML::Node &n, const std::string &k) { return int(yaml::integer(n, k, source)); };
    auto number = [&](const YAML::Node &n, const std::string &k) { return yaml::number(n, k, source); };
    auto boolean = [&](const YAML::Node &n, const std::string &k) { return yaml::boolean(n, k, source); };
    try {
        MapReader top(root, "", source);
        top.on("version", [&](const YAML::Node &n, const std::string &k) {
            if (integer(n, k) != 1)
                yaml::fail(source, "unsupported search config version (this build reads version 1)");
        });
        top.on("search", [&](const YAML::Node &n, const std::string &k) {
            MapReader r(n, k, source);
            r.on("beam_size", [&](const YAML::Node &m, const std::string &mk) { o.beam_size = integer(m, mk); });
            r.on("passes", [&](const YAML::Node &m, const std::string &mk) { o.passes = integer(m, mk); });
            r.on("dropout", [&](const YAML::Node &m, const std::string &mk) { o.dropout = number(m, mk); });
            r.on("seed",
                 [&](const YAML::Node &m, const std::string &mk) { o.seed = uint64_t(yaml::integer(m, mk, source)); });
            r.on("cores", [&](const YAML::Node &m, const std::string &mk) { o.cores = integer(m, mk); });
            r.on("core_cache_bytes",
                 [&](const YAML::Node &m, const std::string &mk) { o.core_cache_bytes = number(m, mk); });
            r.on("shared_cache_bytes_per_core",
                 [&](const YAML::Node &m, const std::string &mk) { o.shared_cache_bytes_per_core = number(m, mk); });
            r.on("threads", [&](const YAML::Node &m, const std::string &mk) { o.threads = integer(m, mk); });
            r.on("max_tilings", [&](const YAML::Node &m, const std::string &mk) { o.max_tilings = integer(m, mk); });
            r.on("tiling_stride",
                 [&](const YAML::Node &m, const std::string &mk) { o.tiling_stride = integer(m, mk); });
            r.on("refined_runs", [&](const YAML::Node &m, const std::string &mk) { o.refined_runs = integer(m, mk); });
            r.on("hash_penalty", [&](const YAML::Node &m, const std::string &mk) { o.hash_penalty = number(m, mk); });
            r.on("max_cost_twins",
                 [&](const YAML::Node &m, const std::string &mk) { o.max_cost_twins = integer(m, mk); });
            r.on("spread_cost_twins",
                 [&](const YAML::Node &m, const std::string &mk) { o.spread_cost_twins = boolean(m, mk); });
            r.on("twin_lookahead",
                 [&](const YAML::Node &m, const std::string &mk) { o.twin_lookahead = integer(m, mk); });
            r.on("cost_resolution",
                 [&](const YAML::Node &m, const std::string &mk) { o.cost_resolution = number(m, mk); });
            r.on("weights", [&](const YAML::Node &m, const std::string &mk) { o.weights = yaml::text(m, mk, source); });
            r.on("gpu_schedules",
                 [&](const YAML::Node &m, const std::string &mk) { o.gpu_schedules = yaml::text(m, mk, source); });
            r.on("gpu_beam_size",
                 [&](const YAML::Node &m, const std::string &mk) { o.gpu_beam_size = integer(m, mk); });
            r.on("gpu_device",
                 [&](const YAML::Node &m, const std::string &mk) { o.gpu_device = yaml::text(m, mk, source); });
            r.on("single_pass_hash_penalty",
                 [&](const YAML::Node &m, const std::string &mk) { o.single_pass_hash_penalty = boolean(m, mk); });
            r.on("price_pending_updates",
                 [&](const YAML::Node &m, const std::string &mk) { o.price_pending_updates = boolean(m, mk); });
            r.on("memoize_features",
                 [&](const YAML::Node &m, const std::string &mk) { o.memoize_features = boolean(m, mk); });
            r.run();
        });
        top.on("pruning", [&](const YAML::Node &n, const std::string &k) {
            MapReader r(n, k, source);
            PruningRules &p = o.pruning;
            r.on("parallel_outer_only",
                 [&](const YAML::Node &m, const std::string &mk) { p.parallel_outer_only = boolean(m, mk); });
            r.on("native_vector_width_only",
                 [&](const YAML::Node &m, const std::string &mk) { p.native_vector_width_only = boolean(m, mk); });
            r.on("limit_tasks", [&](const YAML::Node &m, const std::string &mk) { p.limit_tasks = boolean(m, mk); });
            r.on("min_tasks_per_core",
                 [&](const YAML::Node &m, const std::string &mk) { p.min_tasks_per_core = number(m, mk); });
            r.on("max_tasks_per_core",
                 [&](const YAML::Node &m, const std::string &mk) { p.max_tasks_per_core = number(m, mk); });
            r.on("max_recompute", [&](const YAML::Node &m, const std::string &mk) { p.max_recompute = number(m, mk); });
            r.on("max_serial_root_points",
                 [&](const YAML::Node &m, const std::string &mk) { p.max_serial_root_points = number(m, mk); });
            r.on("expansion", [&](const YAML::Node &m, const std::string &mk) { p.expansion = number(m, mk); });
            r.on("expanding_at_root",
                 [&](const YAML::Node &m, const std::string &mk) { p.expanding_at_root = boolean(m, mk); });
            r.on("max_inner_realization_bytes",
                 [&](const YAML::Node &m, const std::string &mk) { p.max_inner_realization_bytes = number(m, mk); });
            r.run();
        });
        top.on("space", [&](const YAML::Node &n, const std::string &k) {
            MapReader r(n, k, source);
            SpaceRules &sp = o.space;
            r.on("max_tile_shapes", [&](const YAML::Node &m, const std::string &mk) {
                sp.max_tile_shapes = yaml::integer(m, mk, source);
            });
            r.on("max_inner_tilings",
                 [&](const YAML::Node &m, const std::string &mk) { sp.max_inner_tilings = integer(m, mk); });
            r.on("max_unroll_points",
                 [&](const YAML::Node &m, const std::string &mk) { sp.max_unroll_points = integer(m, mk); });
            r.on("vector_loops", [&](const YAML::Node &m, const std::string &mk) { sp.vector_loops = integer(m, mk); });
            r.on("vectorize_storage_dense",
                 [&](const YAML::Node &m, const std::string &mk) { sp.vectorize_storage_dense = boolean(m, mk); });
            r.on("reductions_outermost",
                 [&](const YAML::Node &m, const std::string &mk) { sp.reductions_outermost = boolean(m, mk); });
            r.on("register_blocks_in_place",
                 [&](const YAML::Node &m, const std::string &mk) { sp.register_blocks_in_place = boolean(m, mk); });
            r.on("tiles_hold_a_vector",
                 [&](const YAML::Node &m, const std::string &mk) { sp.tiles_hold_a_vector = boolean(m, mk); });
            r.on("consumer_register_blocks",
                 [&](const YAML::Node &m, const std::string &mk) { sp.consumer_register_blocks = boolean(m, mk); });
            r.run();
        });
        top.on("machine", [&](const YAML::Node &n, const std::string &k) {
            MapReader r(n, k, source);
            MachineMatch &m = o.machine.emplace();
            r.on("cpu_vendor",
                 [&](const YAML::Node &v, const std::string &vk) { m.cpu_vendor = yaml::text(v, vk, source); });
            r.on("cpu_family", [&](const YAML::Node &v, const std::string &vk) { m.cpu_family = integer(v, vk); });
            r.on("cpu_model", [&](const YAML::Node &v, const std::string &vk) { m.cpu_model = integer(v, vk); });
            r.on("free_page_reporting",
                 [&](const YAML::Node &v, const std::string &vk) { m.free_page_reporting = boolean(v, vk) ? 1 : 0; });
            r.run();
        });
        top.on("cost_model", [&](const YAML::Node &n, const std::string &k) {
            MapReader r(n, k, source);
            r.on("coefficients", [&](const YAML::Node &m, const std::string &mk) {
                MapReader c(m, mk, source);
                for (size_t i = 0; i < o.coefficients.size(); i++) {
                    c.on(featurize::cost_term_names()[i], [&o, i, &number](const YAML::Node &v, const std::string &vk) {
                        o.coefficients[i] = number(v, vk);
                    });
                }
                c.run();
            });
            r.run();
        });
        top.run();
    } catch (const YAML::Exception &e) {
        yaml::fail(source, std::string("invalid config: ") + e.what());
    }
    o.validate(source);
    return o;
}

SearchOptions load_search_options(const std::string &path) {
    SearchOptions o = parse_search_options(yaml::read_file(path), path);
    // A weights path in a config file is relative to the file.
    if (!o.weights.empty() && std::filesystem::path(o.weights).is_relative())
        o.weights = (std::filesystem::path(path).parent_path() / o.weights).string();
    return o;
}

const std::vector<EnvironmentVariable> &search_environment_variables() {
    static const std::vector<EnvironmentVariable> variables = {
        {"SCHEDFORGE_SEARCH_CONFIG", ""},  {"SCHEDFORGE_BEAM_SIZE", "beam_size"}, {"SCHEDFORGE_PASSES", "passes"},
        {"SCHEDFORGE_DROPOUT", "dropout"}, {"SCHEDFORGE_SEED", "seed"},           {"SCHEDFORGE_THREADS", "threads"},
        {"SCHEDFORGE_WEIGHTS", "weights"}};
    return variables;
}

SearchOptions search_options_from_environment(const SearchOptions &defaults) {
    const std::vector<EnvironmentVariable> &known = search_environment_variables();
    for (char **entry = environ; *entry; entry++) {
        const std::string name = std::string(*entry).substr(0, std::strcspn(*entry, "="));
        if (name.rfind("SCHEDFORGE_", 0) != 0 ||
            std::any_of(known.begin(), known.end(), [&](const EnvironmentVariable &v) { return name == v.name; }))
            continue;
        std::string list;
        for (const EnvironmentVariable &v : known) list += (list.empty() ? "" : ", ") + std::string(v.name);
        throw UserError("unknown environment variable " + name + " (schedforge reads " + list + ")");
    }
    SearchOptions o = defaults;
    for (const EnvironmentVariable &v : known) {
        const char *value = std::getenv(v.name);
        if (!value) continue;
        const std::string source = std::string("environment variable ") + v.name;
        if (!*v.key) {
            o = load_search_options(value);
            continue;
        }
        // Through the config parser, so values are checked exactly as in a file; the emitter
        // quotes whatever the variable holds.
        YAML::Node doc;
        doc["search"][v.key] = std::string(value);
        o = parse_search_options(YAML::Dump(doc), source, o);
    }
    return o;
}

} // namespace schedforge::sampler
