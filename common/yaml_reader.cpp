#include "common/yaml_reader.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace schedforge::yaml {

void fail(const std::string &source, const std::string &message) { throw UserError(source + ": " + message); }

MapReader::MapReader(const YAML::Node &node, std::string path, const std::string &source)
    : node_(node), path_(std::move(path)), source_(source) {
    if (!node_.IsMap()) fail(source_, "'" + (path_.empty() ? "<top level>" : path_) + "' must be a mapping");
}

void MapReader::run() {
    std::set<std::string> known;
    for (const auto &[key, fn] : handlers_) known.insert(key);
    for (const auto &kv : node_) {
        const std::string key = kv.first.as<std::string>();
        if (!known.count(key)) fail(source_, "unknown key '" + join(key) + "'");
    }
    for (const auto &[key, fn] : handlers_) {
        if (node_[key]) fn(node_[key], join(key));
    }
}

namespace {

template<typename T>
T scalar(const YAML::Node &node, const std::string &key, const std::string &source, const char *what) {
    if (!node.IsScalar()) fail(source, "'" + key + "' must be " + what);
    try {
        return node.as<T>();
    } catch (const YAML::Exception &) {
        fail(source, "'" + key + "' must be " + what + ", got '" + node.Scalar() + "'");
    }
}

} // namespace

int64_t integer(const YAML::Node &n, const std::string &key, const std::string &source) {
    return scalar<int64_t>(n, key, source, "an integer");
}
double number(const YAML::Node &n, const std::string &key, const std::string &source) {
    return scalar<double>(n, key, source, "a number");
}
bool boolean(const YAML::Node &n, const std::string &key, const std::string &source) {
    return scalar<bool>(n, key, source, "true or false");
}
std::string text(const YAML::Node &n, const std::string &key, const std::string &source) {
    return scalar<std::string>(n, key, source, "a string");
}

YAML::Node parse(const std::string &yaml_text, const std::string &source) {
    YAML::Node root;
    try {
        root = YAML::Load(yaml_text);
    } catch (const YAML::ParserException &e) {
        fail(source, "malformed YAML at line " + std::to_string(e.mark.line + 1) + ", column " +
                         std::to_string(e.mark.column + 1) + ": " + e.msg);
    }
    if (!root || root.IsNull()) fail(source, "the file is empty; expected a mapping of settings");
    return root;
}

std::string read_file(const std::string &path) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) throw UserError(path + ": is a folder, not a config file");
    std::ifstream in(path);
    if (!in) throw UserError(path + ": cannot read config file (" + std::strerror(errno) + ")");
    std::stringstream text;
    text << in.rdbuf();
    if (in.bad()) throw UserError(path + ": error while reading config file");
    return text.str();
}

} // namespace schedforge::yaml
