#include "featurize/loop_nest_text.h"

#include "common/errors.h"

#include <sstream>

namespace schedforge::featurize {

namespace {

constexpr const char *kMagic = "schedforge-loop-nest";
// Bounds on what a stored nest may say: far above any schedule, far below int64 overflow in
// LoopNestBounds' products.
constexpr int64_t kMaxTileExtent = int64_t(1) << 30;
constexpr int kMaxVectorWidth = 1024;

std::string site_token(const Site &s) {
    switch (s.kind) {
    case Site::Unscheduled: return "unscheduled";
    case Site::Inline: return "inline";
    case Site::Root: return "root";
    case Site::At: break;
    }
    return "at " + std::to_string(s.stage.node) + "." + std::to_string(s.stage.stage) + "." + std::to_string(s.level);
}

// Levels separated by '/', each level's extents by ','; '-' for no levels, '*' for a level of a
// stage without loops.
std::string tiles_token(const std::vector<std::vector<int64_t>> &tiles) {
    if (tiles.empty()) return "-";
    std::string out;
    for (size_t k = 0; k < tiles.size(); k++) {
        if (k) out += "/";
        if (tiles[k].empty()) out += "*";
        for (size_t l = 0; l < tiles[k].size(); l++) out += (l ? "," : "") + std::to_string(tiles[k][l]);
    }
    return out;
}

std::string node_line(const FunctionDAG &dag, size_t n, const FuncSchedule &fs) {
    return "node " + std::to_string(n) + " " + stable_name(dag.nodes[n].name) + " compute " + site_token(fs.compute) +
           " store " + site_token(fs.store) + " stages " + std::to_string(fs.stages.size());
}

std::string stage_line(size_t s, const StageTiling &t) {
    return "stage " + std::to_string(s) + " tiles " + tiles_token(t.tiles) + " vector " +
           std::to_string(t.vector_loop) + " " + std::to_string(t.vector_width) + " parallel " +
           std::to_string(int(t.parallel)) + " unroll " + std::to_string(int(t.unroll)) + (t.gpu ? " gpu" : "");
}

// Reads the text line by line, every failure a UserError that says where. Each line must be
// exactly what nest_text() writes for what it was read as (no extra tokens, spaces or digits),
// and each Func's sites and stage count must agree with each other and with the DAG, so that
// what LoopNest::validate does not look at (unscheduled Funcs, stage lists) is sound too.
class Parser {
public:
    Parser(const FunctionDAG &dag, const std::string &text) : dag_(dag), in_(text) {}

    LoopNest parse() {
        const std::string head = line();
        std::istringstream words(head);
        std::string magic, nodes_word;
        int version = 0;
        size_t nodes = 0;
        words >> magic >> version >> nodes_word >> nodes;
        if (!words || magic != kMagic || nodes_word != "nodes") fail("not a loop nest");
        if (version != kLoopNestTextVersion) {
            fail("version " + std::to_string(version) + ", this build reads version " +
                 std::to_string(kLoopNestTextVersion));
        }
        if (nodes != dag_.nodes.size()) {
            fail(std::to_string(nodes) + " nodes, the pipeline has " + std::to_string(dag_.nodes.size()));
        }
        canonical(head, std::string(kMagic) + " " + std::to_string(version) + " nodes " + std::to_string(nodes));
        LoopNest nest(dag_);
        for (size_t n = 0; n < nodes; n++) node(n, nest.funcs[n]);
        std::string rest;
        if (std::getline(in_, rest)) {
            line_number_++;
            fail("text after the last node");
        }
        const std::string why = nest.validate(dag_);
        if (!why.empty()) throw UserError("loop nest: not legal for this pipeline: " + why);
        return nest;
    }

private:
    [[noreturn]] void fail(const std::string &why) const {
        throw UserError("loop nest, line " + std::to_string(line_number_) + ": " + why);
    }

    std::string line() {
        std::string l;
        if (!std::getline(in_, l)) fail("ends early");
        line_number_++;
        return l;
    }

    void canonical(const std::string &got, const std::string &expected) const {
        if (got != expected) fail("malformed (expected '" + expected + "')");
    }

    Site site(std::istringstream &in) {
        std::string word;
        in >> word;
        if (word == "unscheduled") return Site{};
        if (word == "inline") return Site::inlined();
        if (word == "root") return Site::root();
        if (word != "at") fail("no site");
        std::string where;
        in >> where;
        Site s{Site::At, {}, -1};
        char dot1 = 0, dot2 = 0;
        std::istringstream w(where);
        w >> s.stage.node >> dot1 >> s.stage.stage >> dot2 >> s.level;
        if (!w || dot1 != '.' || dot2 != '.' || s.stage.node < 0 || size_t(s.stage.node) >= dag_.nodes.size() ||
            s.stage.stage < 0 || size_t(s.stage.stage) >= dag_.nodes[size_t(s.stage.node)].stages.size() ||
            s.level < 0) {
            fail("bad site '" + where + "'");
        }
        return s;
    }

    void node(size_t n, FuncSchedule &fs) {
        const std::string text = line();
        std::istringstream in(text);
        std::string word, name, compute_word, store_word, stages_word;
        size_t index = 0, stages = 0;
        in >> word >> index >> name;
        if (!in || word != "node" || index != n) fail("expected node " + std::to_string(n));
        const std::string expected = stable_name(dag_.nodes[n].name);
        if (name != expected) fail("node " + std::to_string(n) + " is '" + expected + "', not '" + name + "'");
        in >> compute_word;
        if (compute_word != "compute") fail("no compute site");
        fs.compute = site(in);
        in >> store_word;
        if (store_word != "store") fail("no store site");
        fs.store = site(in);
        in >> stages_word >> stages;
        if (!in || stages_word != "stages") fail("no stage count");
        const Node &node = dag_.nodes[n];
        const bool tiled = fs.compute.kind == Site::Root || fs.compute.kind == Site::At;
        if (node.is_input && fs.compute.kind != Site::Unscheduled) fail("input " + name + " is scheduled");
        if (!tiled && fs.store.kind != fs.compute.kind) fail(name + ": stored where it is not computed");
        if (fs.compute.kind == Site::Root && fs.store.kind != Site::Root)
            fail(name + ": computed at root, stored inside a loop");
        if (fs.compute.kind == Site::At && fs.store.kind == Site::Unscheduled) fail(name + ": no storage");
        if (fs.compute.kind == Site::At && fs.store.kind == Site::Inline) fail(name + ": no storage");
        if (stages != (tiled ? node.stages.size() : 0)) {
            fail(name + ": " + std::to_string(stages) + " stage tilings, expected " +
                 std::to_string(tiled ? node.stages.size() : 0));
        }
        fs.stages.resize(stages);
        canonical(text, node_line(dag_, n, fs));
        for (size_t s = 0; s < stages; s++) fs.stages[s] = stage(n, s);
    }

    StageTiling stage(size_t n, size_t s) {
        const std::string text = line();
        std::istringstream in(text);
        std::string word, tiles_word, tiles, vector_word, parallel_word, unroll_word;
        size_t index = 0;
        StageTiling t;
        int parallel = 0, unroll = 0;
        in >> word >> index >> tiles_word >> tiles >> vector_word >> t.vector_loop >> t.vector_width >> parallel_word >>
            parallel >> unroll_word >> unroll;
        if (!in || word != "stage" || index != s || tiles_word != "tiles" || vector_word != "vector" ||
            parallel_word != "parallel" || unroll_word != "unroll") {
            fail("expected stage " + std::to_string(s));
        }
        const size_t loops = dag_.nodes[n].stages[s].loops.size();
        if (tiles != "-") {
            std::istringstream levels(tiles);
            for (std::string level; std::getline(levels, level, '/');) {
                std::vector<int64_t> extents;
                std::istringstream items(level == "*" ? "" : level);
                for (std::string item; std::getline(items, item, ',');) {
                    try {
                        size_t used = 0;
                        extents.push_back(std::stoll(item, &used));
                        if (used != item.size() || extents.back() < 1 || extents.back() > kMaxTileExtent)
                            throw std::invalid_argument(item);
                    } catch (const std::exception &) {
                        fail("bad tile extent '" + item + "'");
                    }
                }
                if (extents.size() != loops) {
                    fail("a tile of " + std::to_string(extents.size()) + " loops, the stage has " +
                         std::to_string(loops));
                }
                t.tiles.push_back(std::move(extents));
            }
        }
        if (t.vector_loop < -1 || t.vector_loop >= int(loops) || t.vector_width < 1 ||
            t.vector_width > kMaxVectorWidth || (t.vector_loop < 0 && t.vector_width != 1)) {
            fail("bad vector loop");
        }
        if ((parallel != 0 && parallel != 1) || (unroll != 0 && unroll != 1)) fail("flags are 0 or 1");
        t.parallel = parallel, t.unroll = unroll;
        std::string gpu_word;
        t.gpu = bool(in >> gpu_word) && gpu_word == "gpu"; // a CPU stage's line ends before it
        canonical(text, stage_line(s, t));
        return t;
    }

    const FunctionDAG &dag_;
    std::istringstream in_;
    int line_number_ = 0;
};

} // namespace

std::string nest_text(const FunctionDAG &dag, const LoopNest &nest) {
    std::ostringstream o;
    o << kMagic << " " << kLoopNestTextVersion << " nodes " << dag.nodes.size() << "\n";
    for (size_t n = 0; n < dag.nodes.size(); n++) {
        const FuncSchedule &fs = nest.funcs[n];
        o << node_line(dag, n, fs) << "\n";
        for (size_t s = 0; s < fs.stages.size(); s++) o << stage_line(s, fs.stages[s]) << "\n";
    }
    return o.str();
}

LoopNest parse_nest_text(const FunctionDAG &dag, const std::string &text) { return Parser(dag, text).parse(); }

} // namespace schedforge::featurize
