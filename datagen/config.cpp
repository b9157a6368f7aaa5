#include "datagen/config.h"

#include "common/yaml_reader.h"

#include <filesystem>

namespace schedforge::datagen {

namespace {

void read_sample_search(const YAML::Node &n, const std::string &k, const std::string &source, SampleSearch &s) {
    yaml::MapReader r(n, k, source);
    r.on("beam_size",
         [&](const YAML::Node &m, const std::string &mk) { s.beam_size = int(yaml::integer(m, mk, source)); });
    r.on("passes", [&](const YAML::Node &m, const std::string &mk) { s.passes = int(yaml::integer(m, mk, source)); });
    r.on("dropout", [&](const YAML::Node &m, const std::string &mk) { s.dropout = yaml::number(m, mk, source); });
    r.run();
}

template<typename T>
void field(YAML::Emitter &e, const char *key, const T &value) {
    e << YAML::Key << key << YAML::Value << value;
}

void emit_sample_search(YAML::Emitter &e, const char *key, const SampleSearch &s) {
    e << YAML::Key << key << YAML::Value << YAML::BeginMap;
    field(e, "beam_size", s.beam_size);
    field(e, "passes", s.passes);
    field(e, "dropout", s.dropout);
    e << YAML::EndMap;
}

} // namespace

DatasetConfig parse_dataset_config(const std::string &yaml_text, const std::string &source,
                                   const std::string &base_folder) {
    DatasetConfig c;
    c.runner.integer_tolerance = 1; // benchmarks run with fast-math: a float cast to an integer may move by one
    const YAML::Node root = yaml::parse(yaml_text, source);
    auto integer = [&](const YAML::Node &n, const std::string &k) { return yaml::integer(n, k, source); };
    auto number = [&](const YAML::Node &n, const std::string &k) { return yaml::number(n, k, source); };
    auto relative = [&](const YAML::Node &n, const std::string &k) {
        const std::filesystem::path p = yaml::text(n, k, source);
        return (p.is_absolute() ? p : std::filesystem::path(base_folder) / p).string();
    };
    std::string generator_path, search_path, weights_path;
    int search_threads = 1;
    try {
        yaml::MapReader top(root, "", source);
        top.on("version", [&](const YAML::Node &n, const std::string &k) {
            if (integer(n, k) != 1)
                yaml::fail(source, "unsupported dataset config version (this build reads version 1)");
        });
        top.on("generator", [&](const YAML::Node &n, const std::string &k) { generator_path = relative(n, k); });
        top.on("search", [&](const YAML::Node &n, const std::string &k) { search_path = relative(n, k); });
        top.on("weights", [&](const YAML::Node &n, const std::string &k) { weights_path = relative(n, k); });
        top.on("pipelines", [&](const YAML::Node &n, const std::string &k) { c.pipelines = integer(n, k); });
        top.on("schedules_per_pipeline",
               [&](const YAML::Node &n, const std::string &k) { c.schedules_per_pipeline = integer(n, k); });
        top.on("seed", [&](const YAML::Node &n, const std::string &k) { c.seed = uint64_t(integer(n, k)); });
        top.on("beam_sample",
               [&](const YAML::Node &n, const std::string &k) { read_sample_search(n, k, source, c.beam_sample); });
        top.on("dropout_samples",
               [&](const YAML::Node &n, const std::string &k) { read_sample_search(n, k, source, c.dropout_samples); });
        top.on("workers", [&](const YAML::Node &n, const std::string &k) {
            yaml::MapReader r(n, k, source);
            runner::RunnerOptions &o = c.runner;
            r.on("parallel_compiles",
                 [&](const YAML::Node &m, const std::string &mk) { o.parallel_compiles = int(integer(m, mk)); });
            r.on("search_threads",
                 [&](const YAML::Node &m, const std::string &mk) { search_threads = int(integer(m, mk)); });
            r.on("exclusive_benchmark", [&](const YAML::Node &m, const std::string &mk) {
                o.exclusive_benchmark = yaml::boolean(m, mk, source);
            });
            r.on("compile_timeout_s",
                 [&](const YAML::Node &m, const std::string &mk) { o.compile_timeout_seconds = number(m, mk); });
            r.on("run_timeout_s",
                 [&](const YAML::Node &m, const std::string &mk) { o.run_timeout_seconds = number(m, mk); });
            r.on("memory_limit_gb", [&](const YAML::Node &m, const std::string &mk) {
                o.memory_limit_bytes = int64_t(number(m, mk) * double(int64_t(1) << 30));
            });
            r.run();
        });
        top.on("timing", [&](const YAML::Node &n, const std::string &k) {
            yaml::MapReader r(n, k, source);
            runner::TimingProtocol &t = c.runner.timing;
            r.on("warmup_runs",
                 [&](const YAML::Node &m, const std::string &mk) { t.warmup_runs = int(integer(m, mk)); });
            r.on("min_samples",
                 [&](const YAML::Node &m, const std::string &mk) { t.min_samples = int(integer(m, mk)); });
            r.on("max_samples",
                 [&](const YAML::Node &m, const std::string &mk) { t.max_samples = int(integer(m, mk)); });
            r.on("accuracy", [&](const YAML::Node &m, const std::string &mk) { t.accuracy = number(m, mk); });
            r.on("max_seconds", [&](const YAML::Node &m, const std::string &mk) { t.max_seconds = number(m, mk); });
            r.on("min_sampling_seconds",
                 [&](const YAML::Node &m, const std::string &mk) { t.min_sampling_seconds = number(m, mk); });
            r.on("threads", [&](const YAML::Node &m, const std::string &mk) { t.threads = int(integer(m, mk)); });
            r.on("max_cpu_wait", [&](const YAML::Node &m, const std::string &mk) { t.max_cpu_wait = number(m, mk); });
            r.on("contended_seconds",
                 [&](const YAML::Node &m, const std::string &mk) { t.contended_seconds = number(m, mk); });
            r.on("rounds", [&](const YAML::Node &m, const std::string &mk) { t.rounds = int(integer(m, mk)); });
            r.on("fresh_processes",
                 [&](const YAML::Node &m, const std::string &mk) { t.fresh_processes = yaml::boolean(m, mk, source); });
            r.run();
        });
        top.run();
    } catch (const YAML::Exception &e) {
        yaml::fail(source, std::string("invalid config: ") + e.what());
    }
    if (!generator_path.empty()) {
        c.generator_text = yaml::read_file(generator_path);
        c.generator = gen::parse_generator_config(c.generator_text, generator_path);
    }
    if (!search_path.empty()) {
        c.search_text = yaml::read_file(search_path);
        c.search = sampler::parse_search_options(c.search_text, search_path);
    }
    c.search.threads = search_threads;
    if (!weights_path.empty()) c.search.weights = weights_path;
    c.validate(source);
    return c;
}

DatasetConfig load_dataset_config(const std::string &path) {
    const std::string folder = std::filesystem::path(path).parent_path().string();
    return parse_dataset_config(yaml::read_file(path), path, folder.empty() ? "." : folder);
}

void DatasetConfig::validate(const std::string &source) const {
    auto fail = [&](const std::string &m) { yaml::fail(source, m); };
    if (pipelines < 1) fail("'pipelines' must be at least 1");
    if (schedules_per_pipeline < 1) fail("'schedules_per_pipeline' must be at least 1");
    if (shard.count < 1 || shard.index < 0 || shard.index >= shard.count) fail("the shard must be K/N with 0 <= K < N");
    for (const auto &[name, s] :
         {std::pair{"beam_sample", beam_sample}, std::pair{"dropout_samples", dropout_samples}}) {
        sampler::SearchOptions o = search;
        o.beam_size = s.beam_size;
        o.passes = s.passes;
        o.dropout = s.dropout;
        o.validate(source + " (" + name + ")");
    }
    if (search.threads < 0) fail("'workers.search_threads' must not be negative");
    try {
        runner::validate(runner);
    } catch (const UserError &e) {
        fail(e.what());
    }
}

std::string DatasetConfig::effective_text() const {
    YAML::Emitter e;
    e << YAML::BeginMap;
    field(e, "version", 1);
    field(e, "seed", seed);
    if (!shard.whole()) field(e, "shard", shard.text());
    field(e, "schedules_per_pipeline", schedules_per_pipeline);
    if (!search.weights.empty()) field(e, "weights", search.weights);
    emit_sample_search(e, "beam_sample", beam_sample);
    emit_sample_search(e, "dropout_samples", dropout_samples);
    e << YAML::Key << "workers" << YAML::Value << YAML::BeginMap;
    field(e, "parallel_compiles", runner.parallel_compiles);
    field(e, "search_threads", search.threads);
    field(e, "exclusive_benchmark", runner.exclusive_benchmark);
    field(e, "compile_timeout_s", runner.compile_timeout_seconds);
    field(e, "run_timeout_s", runner.run_timeout_seconds);
    field(e, "memory_limit_gb", double(runner.memory_limit_bytes) / double(int64_t(1) << 30));
    e << YAML::EndMap;
    const runner::TimingProtocol &t = runner.timing;
    e << YAML::Key << "timing" << YAML::Value << YAML::BeginMap;
    field(e, "warmup_runs", t.warmup_runs);
    field(e, "min_samples", t.min_samples);
    field(e, "max_samples", t.max_samples);
    field(e, "accuracy", t.accuracy);
    field(e, "max_seconds", t.max_seconds);
    field(e, "min_sampling_seconds", t.min_sampling_seconds);
    field(e, "threads", t.threads);
    field(e, "max_cpu_wait", t.max_cpu_wait);
    field(e, "contended_seconds", t.contended_seconds);
    field(e, "rounds", t.rounds);
    field(e, "fresh_processes", t.fresh_processes);
    e << YAML::EndMap;
    // The named configs, verbatim (empty: built-in defaults).
    e << YAML::Key << "generator_config" << YAML::Value << YAML::Literal << generator_text;
    e << YAML::Key << "search_config" << YAML::Value << YAML::Literal << search_text;
    e << YAML::EndMap;
    return std::string(e.c_str()) + "\n";
}

} // namespace schedforge::datagen
