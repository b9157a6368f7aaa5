// Strict YAML config reading shared by every config format: a mapping walker that rejects unknown
// keys by their full dotted path, typed scalars, and file loading, all failing with a UserError
// that names the file ("FILE: 'search.beam_size' must be an integer, got 'x'").
#pragma once

#include "common/errors.h"

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace schedforge::yaml {

[[noreturn]] void fail(const std::string &source, const std::string &message);

// Walks a YAML mapping: register a handler per known key with on(), then run(). run() rejects
// any other key, then calls the handlers of the keys present with their node and full path.
class MapReader {
public:
    using Handler = std::function<void(const YAML::Node &, const std::string &)>;
    MapReader(const YAML::Node &node, std::string path, const std::string &source);
    void on(const std::string &key, Handler fn) { handlers_.emplace_back(key, std::move(fn)); }
    void run();

private:
    std::string join(const std::string &key) const { return path_.empty() ? key : path_ + "." + key; }

    YAML::Node node_;
    std::string path_;
    const std::string &source_;
    std::vector<std::pair<std::string, Handler>> handlers_;
};

int64_t integer(const YAML::Node &n, const std::string &key, const std::string &source);
double number(const YAML::Node &n, const std::string &key, const std::string &source);
bool boolean(const YAML::Node &n, const std::string &key, const std::string &source);
std::string text(const YAML::Node &n, const std::string &key, const std::string &source);

// Parses YAML text into a non-empty mapping (malformed YAML and empty files are user errors).
YAML::Node parse(const std::string &yaml_text, const std::string &source);
// Reads a whole config file (a folder, a missing or unreadable file are user errors).
std::string read_file(const std::string &path);

} // namespace schedforge::yaml
