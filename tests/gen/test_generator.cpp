// Graph generation: validity, determinism, coverage, configuration errors.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <tensoracle/gen/generator.hpp>
#include <tensoracle/gen/input_search.hpp>
#include <tensoracle/graph/interpreter.hpp>
#include <tensoracle/io/onnx_known_issues.hpp>
#include <tensoracle/ops/registry.hpp>
#ifdef TENSORACLE_TEST_JSON
#include <tensoracle/gen/config_json.hpp>
#endif
#include <tensoracle/io/case_files.hpp>

// One namespace per file: test executables compile as one unity file (tests/CMakeLists.txt).
namespace gen_generator_test {

namespace to = tensoracle;

namespace {
bool all_finite(const to::tensor& t) {
    if (!to::info(t.element_dtype()).is_floating) return true;
    const auto d = t.to<double>();
    return std::all_of(d.begin(), d.end(), [](double x) { return std::isfinite(x); });
}

to::graph::node make_node(std::string op, std::vector<std::string> in, std::string out, to::spec::attribute_map a = {}) {
    to::graph::node n;
    n.op_type = std::move(op);
    n.inputs = std::move(in);
    n.outputs = {std::move(out)};
    n.attributes = std::move(a);
    return n;
}

/// Structure of a graph as text (attributes included, tensor data by shape).
std::string structure(const to::graph::graph& m) {
    std::ostringstream os;
    for (const auto& in : m.inputs) os << "in " << in.name << ' ' << to::name(in.type) << to::to_string(*in.shape) << '\n';
    for (const auto& [k, t] : m.initializers) os << "init " << k << ' ' << to::name(t.element_dtype()) << to::to_string(t.shape()) << '\n';
    for (const auto& n : m.nodes) {
        os << n.op_type << '(';
        for (const auto& i : n.inputs) os << i << ',';
        os << ")->";
        for (const auto& o : n.outputs) os << o << ',';
        for (const auto& [k, v] : n.attributes) {
            os << ' ' << k << '=';
            if (const auto* i = std::get_if<std::int64_t>(&v)) os << *i;
            else if (const auto* d = std::get_if<double>(&v)) os << *d;
            else if (const auto* s = std::get_if<std::string>(&v)) os << *s;
            else if (const auto* l = std::get_if<std::vector<std::int64_t>>(&v)) for (auto x : *l) os << x << ',';
            else os << "other";
        }
        os << '\n';
    }
    for (const auto& o : m.outputs) os << "out " << o.name << '\n';
    return os.str();
}
}  // namespace

TEST_CASE("generator: default config, 10-node graphs are valid, run, and the search finds finite data") {
    const to::gen::generator gen(to::gen::config{});
    to::gen::generation_stats stats;
    int found = 0;
    const int graphs = 30;
    for (int i = 0; i < graphs; ++i) {
        CAPTURE(i);
        auto g = to::gen::case_rng(2026, static_cast<std::uint64_t>(i), gen.settings().hash());
        const auto sketch = gen.generate(g, stats);
        const auto& m = sketch.model;
        CHECK(m.nodes.size() == 10);
        REQUIRE_NOTHROW(m.validate());
        CHECK_FALSE(m.inputs.empty());
        CHECK_FALSE(m.outputs.empty());
        const auto r = to::gen::search_inputs(sketch, g);
        std::map<std::string, to::tensor, std::less<>> feeds;
        for (const auto& in : m.inputs) feeds.emplace(in.name, r.values.at(in.name));
        auto model = m;
        for (auto& [k, t] : model.initializers) {
            if (const auto it = r.values.find(k); it != r.values.end()) t = it->second;
        }
        // The interpreter checks each node's output against the spec's shape
        // and dtype inference; a generated graph must pass on any data.
        to::graph::run_result run;
        REQUIRE_NOTHROW(run = to::graph::run(model, feeds, {.record_intermediates = true}));
        for (const auto& o : m.outputs) {
            REQUIRE(run.values.count(o.name) == 1);
            CHECK(run.values.at(o.name).shape() == *o.shape);
            CHECK(run.values.at(o.name).element_dtype() == o.type);
        }
        if (r.success) {
            ++found;
            for (const auto& kv : run.values) {
                const std::string& name = kv.first;  // not a structured binding: CAPTURE's lambda takes it (Clang)
                CAPTURE(name);
                CHECK(all_finite(kv.second));
            }
        }
    }
    CHECK(stats.graphs == graphs + stats.redrawn);  // grown graphs: the kept ones and the re-drawn ones
    // The benchmark measures the rate on 512 graphs; this sample must not fall far below it.
    CHECK(found >= graphs * 8 / 10);
}

TEST_CASE("generator: case i of seed s is a pure function of (s, i, config)") {
    const to::gen::generator gen(to::gen::config{});
    to::gen::generation_stats stats;
    auto first = to::gen::case_rng(7, 5, gen.settings().hash());
    const auto a = gen.generate(first, stats);
    for (std::uint64_t i = 0; i < 5; ++i) {  // other cases in between change nothing
        auto g = to::gen::case_rng(7, i, gen.settings().hash());
        (void)gen.generate(g, stats);
    }
    auto again = to::gen::case_rng(7, 5, gen.settings().hash());
    const auto b = gen.generate(again, stats);
    CHECK(structure(a.model) == structure(b.model));
    auto other = to::gen::case_rng(7, 6, gen.settings().hash());
    CHECK(structure(gen.generate(other, stats).model) != structure(a.model));
    // A different config is a different stream.
    to::gen::config c2;
    c2.max_nodes = 11;
    CHECK(c2.hash() != gen.settings().hash());
}

TEST_CASE("generation_times: timing changes no graph, and every instance tried is charged once") {
    const to::gen::generator gen(to::gen::config{});
    to::gen::generation_stats plain, timed;
    timed.times.enabled = true;
    for (std::uint64_t i = 0; i < 12; ++i) {
        CAPTURE(i);
        auto g1 = to::gen::case_rng(31, i, gen.settings().hash());
        auto g2 = to::gen::case_rng(31, i, gen.settings().hash());
        const auto a = gen.generate(g1, plain);
        const auto b = gen.generate(g2, timed);
        CHECK(structure(a.model) == structure(b.model));
    }
    // Off: nothing recorded, no reason copied.
    CHECK(plain.times.total_ms == 0.0);
    CHECK(plain.times.kept + plain.times.refused + plain.times.dropped == 0);
    CHECK(plain.rejected.last.empty());
    const auto& t = timed.times;
    // Every inserted node is one kept instance; refused calls are the rejections
    // generate_instance counted, spread over their reasons (op name left out).
    CHECK(t.kept == timed.forward + timed.backward);
    CHECK(t.refused > 0);
    std::size_t by_reason = 0;
    for (const auto& [why, r] : t.refused_by_reason) {
        CAPTURE(why);
        CHECK_FALSE(why.empty());
        CHECK(why.find("(forward)") == std::string::npos);  // insertion's own refusals are not instance calls
        CHECK(r.second >= 0.0);
        by_reason += r.first;
    }
    CHECK(by_reason == t.refused);
    CHECK(t.refused_by_reason.count("(no reason recorded)") == 0);  // every refusal named its reason
    // Dropped instances are exactly the insertions refused for a domain after solving.
    std::size_t domain_refusals = 0;
    for (const auto& [why, n] : timed.rejected.by_reason) {
        if (why.find("its domain is out of reach of the values (forward)") != std::string::npos ||
            why.find("a reader's domain would be out of reach (backward)") != std::string::npos) {
            domain_refusals += n;
        }
    }
    CHECK(t.dropped == domain_refusals);
    CHECK(timed.rejected.total() >= t.refused + t.dropped);
    CHECK(t.kept > 0);
    for (const double ms : {t.kept_ms, t.refused_ms, t.dropped_ms, t.reachability_ms, t.finish_ms}) CHECK(ms >= 0.0);
    CHECK(t.kept_ms > 0.0);
    CHECK(t.kept_ms + t.refused_ms + t.dropped_ms + t.reachability_ms + t.finish_ms <= t.total_ms);
    // merge adds up.
    to::gen::generation_stats sum;
    sum.merge(timed);
    sum.merge(timed);
    CHECK(sum.times.enabled);
    CHECK(sum.times.kept == 2 * t.kept);
    CHECK(sum.times.refused_by_reason.size() == t.refused_by_reason.size());
    CHECK(sum.times.total_ms == doctest::Approx(2 * t.total_ms));
}

TEST_CASE("generator: every registry op is drawable at opset 17 except ops not current there") {
    const to::gen::generator gen(to::gen::config{});
    std::set<std::string> table;
    for (const auto& p : gen.ops()) table.insert(std::string(p.op->op_type));
    for (const auto& e : to::ops::registry()) {
        const std::string name(e.op_type);
        CAPTURE(name);
        if (gen.excluded().count(name) != 0) {
            // Only opset reasons are acceptable under the default config.
            CHECK(gen.excluded().at(name).find("opset") != std::string::npos);
            CHECK(name == "Upsample");
        } else {
            CHECK(table.count(name) == 1);
        }
    }
}

TEST_CASE("generator: graphs cover the op table and the dtypes") {
    to::gen::config cfg;
    cfg.max_nodes = 12;
    const to::gen::generator gen(cfg);
    to::gen::generation_stats stats;
    std::set<std::string> seen_ops;
    std::set<to::dtype> seen_dtypes;
    for (std::uint64_t i = 0; i < 200; ++i) {
        auto g = to::gen::case_rng(99, i, cfg.hash());
        const auto s = gen.generate(g, stats);
        for (const auto& n : s.model.nodes) seen_ops.insert(n.op_type);
        for (const auto& in : s.model.inputs) seen_dtypes.insert(in.type);
        for (const auto& [k, t] : s.model.initializers) seen_dtypes.insert(t.element_dtype());
        for (const auto& o : s.model.outputs) seen_dtypes.insert(o.type);
    }
    std::vector<std::string> missing;
    for (const auto& p : gen.ops()) {
        if (seen_ops.count(std::string(p.op->op_type)) == 0) missing.emplace_back(p.op->op_type);
    }
    CAPTURE(missing);
    // 200 graphs of 12 nodes: about 20 draws per op; a handful may be unlucky.
    CHECK(missing.size() <= 6);
    for (const auto d : {to::dtype::f16, to::dtype::bf16, to::dtype::f32, to::dtype::f64, to::dtype::i64, to::dtype::boolean}) {
        CAPTURE(d);
        CHECK(seen_dtypes.count(d) == 1);
    }
}

TEST_CASE("generator: single-input single-output mode and the support table") {
    to::gen::config cfg;
    cfg.single_io = true;
    cfg.include_ops = {"Add", "Relu", "Conv", "Transpose", "Softmax", "Reshape"};
    cfg.support["Conv"] = {to::dtype::f32};
    cfg.support["Add"] = {to::dtype::f64, to::dtype::f32};
    const to::gen::generator gen(cfg);
    to::gen::generation_stats stats;
    for (std::uint64_t i = 0; i < 20; ++i) {
        auto g = to::gen::case_rng(1, i, cfg.hash());
        const auto s = gen.generate(g, stats);
        CHECK(s.model.inputs.size() == 1);
        CHECK(s.model.outputs.size() == 1);
        for (const auto& n : s.model.nodes) {
            CHECK(std::find(cfg.include_ops.begin(), cfg.include_ops.end(), n.op_type) != cfg.include_ops.end());
        }
        // Conv only on f32, Add only on f32/f64: check each node's first input dtype.
        const auto r = to::graph::run(s.model, [&] {
            std::map<std::string, to::tensor, std::less<>> feeds;
            for (const auto& in : s.model.inputs) feeds.emplace(in.name, to::tensor::zeros(in.type, *in.shape));
            return feeds;
        }(), {.record_intermediates = true});
        for (const auto& n : s.model.nodes) {
            const auto d = r.values.at(n.inputs[0]).element_dtype();
            if (n.op_type == "Conv") CHECK(d == to::dtype::f32);
            if (n.op_type == "Add") CHECK((d == to::dtype::f32 || d == to::dtype::f64));
        }
    }
}

TEST_CASE("generator: contradictory or malformed configs fail fast, naming the conflict") {
    to::gen::config rank;
    rank.include_ops = {"Conv", "MaxPool"};
    rank.max_rank = 2;
    CHECK_THROWS_WITH_AS(to::gen::generator{rank}, doctest::Contains("no op can be generated"), to::error);
    try {
        to::gen::generator{rank};
    } catch (const to::error& e) {
        const std::string what = e.what();
        CHECK(what.find("Conv") != std::string::npos);
        CHECK(what.find("MaxPool") != std::string::npos);
    }
    to::gen::config unknown;
    unknown.include_ops = {"Conv2D"};
    CHECK_THROWS_WITH_AS(to::gen::generator{unknown}, doctest::Contains("'Conv2D', which has no spec"), to::error);
    to::gen::config no_dtypes;
    no_dtypes.dtypes.clear();
    CHECK_THROWS_WITH_AS(to::gen::generator{no_dtypes}, doctest::Contains("dtypes is empty"), to::error);
    to::gen::config dims;
    dims.min_dim = 10;
    dims.max_dim = 2;
    CHECK_THROWS_WITH_AS(to::gen::generator{dims}, doctest::Contains("dims range [10, 2]"), to::error);
    to::gen::config support;
    support.include_ops = {"Conv"};
    support.support["Conv"] = {to::dtype::i8};
    CHECK_THROWS_WITH_AS(to::gen::generator{support}, doctest::Contains("support table lists no dtype it accepts"), to::error);
    to::gen::config only_vulnerable;
    only_vulnerable.include_ops = {"Log", "Sqrt"};
    only_vulnerable.vulnerable_ops = false;
    CHECK_THROWS_WITH_AS(to::gen::generator{only_vulnerable}, doctest::Contains("vulnerable_ops is off"), to::error);
}

TEST_CASE("sample_op: a valid instance of every op from its spec and hints") {
    for (const auto& e : to::ops::registry()) {
        CAPTURE(e.op_type);
        to::rng g(3);
        const auto inst = to::gen::sample_op(e, g);
        std::vector<const to::tensor*> p;
        for (const auto& t : inst.inputs) p.push_back(t ? &*t : nullptr);
        CHECK_NOTHROW((void)to::spec::evaluate(e, p, inst.attributes));
    }
}

/// A copy of a registry entry whose constraints() counts its calls: one call
/// per round of generate_instance (entries hold plain function pointers,
/// hence the static state).
struct counted_spec {
    static inline const to::spec::op_entry* real = nullptr;
    static inline int calls = 0;
    static to::spec::op_entry of(const to::spec::op_entry& e) {
        real = &e;
        calls = 0;
        to::spec::op_entry counted = e;
        counted.constraints = [](const to::spec::context& c) {
            ++calls;
            return real->constraints(c);
        };
        return counted;
    }
};

/// Instance `seed` of a forward insertion whose input 0 consumes an f32 value of `shape`.
std::optional<to::gen::op_instance> forward_instance(const to::gen::op_profile& p, const to::shape_type& shape,
                                                     std::uint64_t seed, to::gen::rejection_counts& why) {
    to::gen::instance_request req{p.op, {}, std::nullopt, false};
    req.bound_inputs.emplace(0, to::gen::typed_shape{to::dtype::f32, shape});
    to::rng g(seed);
    return to::gen::generate_instance(p, req, to::gen::config{}, g, why);
}
/// The same with the op's output 0 bound to an f32 placeholder of `shape` (backward insertion).
std::optional<to::gen::op_instance> backward_instance(const to::gen::op_profile& p, const to::shape_type& shape,
                                                      std::uint64_t seed, to::gen::rejection_counts& why) {
    to::gen::instance_request req{p.op, {}, std::nullopt, false};
    req.bound_output = to::gen::typed_shape{to::dtype::f32, shape};
    to::rng g(seed);
    return to::gen::generate_instance(p, req, to::gen::config{}, g, why);
}

TEST_CASE("generate_instance: a length guess that propagation refuted is not tried again") {
    // ReduceMax over a rank-0 value: every `axes` list is out of [-0, 0). The
    // one length guessed for it is the only one a redraw can draw, so each of
    // the 14 redraws it used to get repeated the refuted guess.
    const auto counted = counted_spec::of(to::ops::get_op("ReduceMax"));
    const to::gen::op_profile p(counted);
    int solved = 0, refused = 0, most_calls = 0;
    for (std::uint64_t seed = 0; seed < 200; ++seed) {
        to::gen::rejection_counts why;
        counted_spec::calls = 0;
        const auto inst = forward_instance(p, {}, seed, why);
        most_calls = std::max(most_calls, counted_spec::calls);
        if (inst) {
            ++solved;
            CHECK(inst->attributes.count("axes") == 0);
        } else {
            ++refused;
            REQUIRE(why.by_reason.size() == 1);
            CHECK(why.by_reason.begin()->first.find("axes") != std::string::npos);
        }
    }
    CHECK(solved > 40);
    CHECK(refused > 40);
    CHECK(most_calls <= 2);
}

TEST_CASE("generate_instance: a backward rank nudge gives up on a length that does not set the rank, not on Squeeze's") {
    // Backward into [5, 3, 7]: a ReduceSum with keepdims keeps its input's rank
    // whatever its axes' length, so after one nudge that left the rank where it
    // was the instance is refused (it took a third round, a nudge the other
    // way, before). A Squeeze's rank moves against its axes' length (and a
    // length past its input's rank leaves rank 0): those nudges still run.
    const auto counted = counted_spec::of(to::ops::get_op("ReduceSum"));
    const to::gen::op_profile reduce(counted);
    int solved = 0, rank_refusals = 0, three_rounds = 0;
    for (std::uint64_t seed = 0; seed < 400; ++seed) {
        to::gen::rejection_counts why;
        counted_spec::calls = 0;
        const auto inst = backward_instance(reduce, {5, 3, 7}, seed, why);
        if (inst) {
            ++solved;
            CHECK(inst->output_shapes.at(0) == to::shape_type{5, 3, 7});
        } else if (why.by_reason.begin()->first.find("output rank cannot match") != std::string::npos) {
            ++rank_refusals;
            if (counted_spec::calls >= 3) ++three_rounds;
        }
    }
    CHECK(solved >= 5);
    CHECK(rank_refusals >= 100);
    CHECK(three_rounds * 10 <= rank_refusals);  // was more than half of them
    const to::gen::op_profile squeeze(to::ops::get_op("Squeeze"));
    int squeezed = 0;
    for (std::uint64_t seed = 0; seed < 400; ++seed) {
        to::gen::rejection_counts why;
        const auto inst = backward_instance(squeeze, {5, 3, 7}, seed, why);
        if (!inst) continue;
        ++squeezed;
        CHECK(inst->output_shapes.at(0) == to::shape_type{5, 3, 7});
    }
    CHECK(squeezed >= 120);  // 199 of 400; stopping after an unmoved rank 0 gave 24
}

TEST_CASE("generate_instance: small integer inputs are shape-like from the first round, and one the spec never reads goes back") {
    // Slice reads the values of starts, ends, axes and steps. Asked one at a
    // time, each cost a round of the spec's calls (4.5 rounds an instance).
    const auto counted = counted_spec::of(to::ops::get_op("Slice"));
    const to::gen::op_profile p(counted);
    int solved = 0;
    for (std::uint64_t seed = 0; seed < 100; ++seed) {
        to::gen::rejection_counts why;
        const auto inst = forward_instance(p, {6, 5, 4}, seed, why);
        if (!inst) continue;
        ++solved;
        for (std::size_t i = 1; i < inst->inputs.size(); ++i) {
            if (inst->inputs[i].role == to::gen::input_role::absent) continue;
            CHECK(inst->inputs[i].role == to::gen::input_role::constant);
            CHECK(inst->inputs[i].data.has_value());
        }
    }
    CHECK(solved > 80);
    CHECK(static_cast<double>(counted_spec::calls) / 100.0 < 2.5);
    // Trilu's k is a small integer input too, but data: its spec never reads
    // it, so it stays a placeholder (the input search draws it).
    const to::gen::op_profile trilu(to::ops::get_op("Trilu"));
    int with_k = 0;
    for (std::uint64_t seed = 0; seed < 60; ++seed) {
        to::gen::rejection_counts why;
        const auto inst = forward_instance(trilu, {4, 5}, seed, why);
        REQUIRE(inst.has_value());
        if (inst->inputs.size() < 2 || inst->inputs[1].role == to::gen::input_role::absent) continue;
        ++with_k;
        CHECK(inst->inputs[1].role == to::gen::input_role::placeholder);
        CHECK_FALSE(inst->inputs[1].data.has_value());
    }
    CHECK(with_k > 10);
}

TEST_CASE("generate_instance: a Split with a split input names one output per length") {
    // ONNX's inference rejects a Split node whose output count is not
    // len(split); the generator drew the count apart and named fewer.
    const to::gen::op_profile p(to::ops::get_op("Split"));
    int with_split = 0;
    for (std::uint64_t seed = 0; seed < 300; ++seed) {
        to::gen::rejection_counts why;
        const auto inst = forward_instance(p, {12, 6}, seed, why);
        if (!inst || inst->inputs.size() < 2 || inst->inputs[1].role == to::gen::input_role::absent) continue;
        ++with_split;
        REQUIRE(inst->inputs[1].data.has_value());
        CHECK(inst->output_count == inst->inputs[1].data->size());
        CHECK(inst->output_shapes.size() == inst->output_count);
    }
    CHECK(with_split > 30);
}

TEST_CASE("generate_instance: no Concat or Gather axis that ONNX 1.12's data propagation refuses, unless told") {
    // ONNX 1.12 checks these ops' axis against the element count of input 0's propagated
    // values, not its rank (io::onnx_1_12_data_propagation_failure): on a [1, 1] input,
    // axis 1 or -2 fails its strict inference. The default config avoids them.
    for (const char* op : {"Concat", "Gather"}) {
        CAPTURE(op);
        const to::gen::op_profile p(to::ops::get_op(op));
        int drawn = 0, refused_when_allowed = 0;
        for (std::uint64_t seed = 0; seed < 400; ++seed) {
            to::gen::rejection_counts why;
            for (const bool avoid : {true, false}) {
                to::gen::instance_request req{p.op, {}, std::nullopt, false};
                req.bound_inputs.emplace(0, to::gen::typed_shape{to::dtype::i64, {1, 1}});
                to::gen::config cfg;
                cfg.avoid_onnx_shape_inference_bugs = avoid;
                to::rng g(seed);
                const auto inst = to::gen::generate_instance(p, req, cfg, g, why);
                if (!inst) continue;
                const bool refused = to::io::onnx_1_12_data_propagation_failure(op, inst->inputs[0].shape, inst->attributes).has_value();
                if (avoid) {
                    ++drawn;
                    CHECK_FALSE(refused);
                } else if (refused) {
                    ++refused_when_allowed;
                }
            }
        }
        CHECK(drawn > 100);
        CHECK(refused_when_allowed > 10);  // the check above can fail
    }
}

TEST_CASE("sample_op: Resize's taps count as work, so max_work bounds cubic and linear resizes") {
    // Each output element reads 4 (cubic), 2 (linear) or 1 (nearest) inputs along every axis:
    // a rank-5 cubic Resize of 65,536 outputs is 67 million reads, not 65,536.
    const auto& resize = to::ops::get_op("Resize");
    to::gen::config cfg;
    cfg.max_work = 4096;
    to::rng g(17);
    std::set<std::string> modes;
    for (int i = 0; i < 150; ++i) {
        const auto inst = to::gen::sample_op(resize, g, cfg);
        std::vector<const to::tensor*> p;
        for (const auto& t : inst.inputs) p.push_back(t ? &*t : nullptr);
        const auto y = to::spec::evaluate(resize, p, inst.attributes).at(0);
        const auto it = inst.attributes.find("mode");
        const std::string mode = it != inst.attributes.end() ? std::get<std::string>(it->second) : "nearest";
        modes.insert(mode);
        const double per_axis = mode == "cubic" ? 4.0 : mode == "linear" ? 2.0 : 1.0;
        const double reads = static_cast<double>(y.size()) * std::pow(per_axis, static_cast<double>(y.shape().size()));
        CAPTURE(mode);
        CAPTURE(to::to_string(y.shape()));
        CHECK(reads <= 4096.0);
    }
    CHECK(modes.size() == 3);
}

TEST_CASE("sample_op: a dtype attribute names only a type the op's output takes") {
    // EyeLike's output has no bfloat16 (ONNX rejects it), while the default config draws bf16 values.
    const auto& eye = to::ops::get_op("EyeLike");
    to::rng g(8);
    std::set<to::dtype> seen;
    for (int i = 0; i < 200; ++i) {
        const auto inst = to::gen::sample_op(eye, g, to::gen::config{});
        const auto it = inst.attributes.find("dtype");
        if (it == inst.attributes.end()) continue;
        const auto d = to::dtype_from_onnx(static_cast<int>(std::get<std::int64_t>(it->second)));
        CHECK_MESSAGE(eye.outputs[0].types.contains(d), to::name(d));
        seen.insert(d);
    }
    CHECK(seen.size() >= 5);  // still a spread of types
}

#ifdef TENSORACLE_TEST_JSON

TEST_CASE("config: JSON round trip, partial files over defaults, and errors naming the key") {
    to::gen::config c;
    c.max_nodes = 20;
    c.dtypes = {to::dtype::f32, to::dtype::f16};
    c.support["Conv"] = {to::dtype::f32};
    c.exclude_ops = {"Resize"};
    const auto back = to::gen::config_from_json(to::gen::to_json(c));
    CHECK(back.canonical() == c.canonical());
    CHECK(back.hash() == c.hash());
    const auto partial = to::gen::config_from_json(nlohmann::json::parse(R"({"max_rank": 3})"));
    CHECK(partial.max_rank == 3);
    CHECK(partial.max_nodes == to::gen::config{}.max_nodes);
    CHECK_THROWS_WITH_AS((void)to::gen::config_from_json(nlohmann::json::parse(R"({"max_node": 3})")),
                         doctest::Contains("max_node): unknown key"), to::error);
    CHECK_THROWS_WITH_AS((void)to::gen::config_from_json(nlohmann::json::parse(R"({"max_nodes": "many"})")),
                         doctest::Contains("max_nodes): wrong type"), to::error);
    CHECK_THROWS_WITH_AS((void)to::gen::config_from_json(nlohmann::json::parse(R"({"dtypes": ["f33"]})")),
                         doctest::Contains("dtypes"), to::error);
    CHECK_THROWS_WITH_AS((void)to::gen::config_from_json(nlohmann::json::parse(R"({"min_rank": 4, "max_rank": 2})")),
                         doctest::Contains("min_rank 4 > max_rank 2"), to::error);
    CHECK_THROWS_WITH_AS((void)to::gen::load_config("/nonexistent/config.json"), doctest::Contains("cannot open"), to::error);
}
#endif

namespace {
/// A chain x -> op1 -> op2 -> ... over one f32 input of `shape`; every value named v<k>.
to::gen::graph_sketch chain(const std::vector<std::pair<std::string, to::spec::attribute_map>>& ops,
                            const to::shape_type& shape) {
    to::gen::graph_sketch s;
    auto& m = s.model;
    m.inputs.push_back({"v0", to::dtype::f32, shape});
    s.shapes.emplace("v0", shape);
    for (std::size_t k = 0; k < ops.size(); ++k) {
        to::graph::node n;
        n.op_type = ops[k].first;
        n.attributes = ops[k].second;
        n.inputs = {"v" + std::to_string(k)};
        n.outputs = {"v" + std::to_string(k + 1)};
        m.nodes.push_back(n);
        s.shapes.emplace(n.outputs[0], shape);  // element-wise and axis ops keep the shape
    }
    m.outputs.push_back({"v" + std::to_string(ops.size()), to::dtype::f32, shape});
    return s;
}
}  // namespace

TEST_CASE("value facts: the image of an element-wise op, forced values carried through") {
    const auto* sigmoid = to::ops::find_op("Sigmoid");
    REQUIRE(sigmoid != nullptr);
    const auto h = sigmoid->hints();
    REQUIRE(h.output_facts);
    const std::vector<to::spec::value_facts> unknown{to::spec::value_facts{}};
    const std::vector<to::shape_type> shapes{{3}};
    const auto y = h.output_facts(unknown, {}, shapes);
    REQUIRE(y.size() == 1);
    CHECK(y[0].lo >= 0.0);
    CHECK(y[0].hi <= 1.0);
    CHECK(y[0].hi > 0.99);
    // Relu of a value that always holds -2 somewhere always holds 0 somewhere.
    const auto relu = to::ops::find_op("Relu")->hints();
    const std::vector<to::spec::value_facts> minus_two{to::spec::value_facts::constant(-2.0)};
    const auto r = relu.output_facts(minus_two, {}, shapes);
    CHECK(r[0].lo == 0.0);
    CHECK(r[0].hi == 0.0);
    CHECK(r[0].forced == std::vector<double>{0.0});
    // Hardmax: a one per row, zeros beside it unless the row has one element.
    const auto hardmax = to::ops::find_op("Hardmax")->hints();
    const std::vector<to::shape_type> rows{{4, 3}}, single{{4, 1}};
    CHECK(hardmax.output_facts(unknown, {}, rows)[0].forced.size() == 2);
    CHECK(hardmax.output_facts(unknown, {}, single)[0].forced == std::vector<double>{1.0});
    CHECK(to::spec::value_facts{}.is_unknown());
    CHECK_FALSE(to::spec::value_facts::within(0.0, 1.0).is_unknown());
}

TEST_CASE("generator: domains no data can reach are found, and reachable ones are not") {
    const to::gen::generator gen(to::gen::config{});
    using attrs = to::spec::attribute_map;
    const to::shape_type s{4, 3};
    // Out of reach: every element of the input is in the wrong place.
    CHECK(gen.unreachable_domain(chain({{"Hardmax", attrs{}}, {"Log", attrs{}}}, s)));          // zeros beside each one
    CHECK(gen.unreachable_domain(chain({{"Sigmoid", attrs{}}, {"Acosh", attrs{}}}, s)));        // (0, 1) vs >= 1
    CHECK(gen.unreachable_domain(chain({{"LogSoftmax", attrs{}}, {"ReduceLogSum", attrs{}}}, s)));  // every term <= 0
    CHECK(gen.unreachable_domain(chain({{"CumSum", attrs{{"exclusive", std::int64_t{1}}}}, {"Reciprocal", attrs{}}}, s)));
    CHECK_FALSE(gen.unreachable_domain(chain({{"CumSum", attrs{}}, {"Reciprocal", attrs{}}}, s)));
    CHECK(gen.unreachable_domain(chain({{"Softmax", attrs{{"axis", std::int64_t{1}}}}, {"Atanh", attrs{}}}, {4, 1})));
    // A row of 28 log-probabilities holds one <= -log 28 < -1: Acos cannot take it (rows of 2 can: -log 2 > -1).
    CHECK(gen.unreachable_domain(chain({{"LogSoftmax", attrs{}}, {"Acos", attrs{}}}, {4, 28})));
    CHECK_FALSE(gen.unreachable_domain(chain({{"LogSoftmax", attrs{}}, {"Acos", attrs{}}}, {4, 2})));
    // The element survives a copy, not a selection (Slice may drop it).
    CHECK(gen.unreachable_domain(chain({{"LogSoftmax", attrs{}}, {"Transpose", attrs{}}, {"Acos", attrs{}}}, {4, 28})));
    // Reachable: the search has room.
    CHECK_FALSE(gen.unreachable_domain(chain({{"Relu", attrs{}}, {"Log", attrs{}}}, s)));
    CHECK_FALSE(gen.unreachable_domain(chain({{"Sigmoid", attrs{}}, {"Log", attrs{}}}, s)));
    CHECK_FALSE(gen.unreachable_domain(chain({{"Softmax", attrs{}}, {"Atanh", attrs{}}}, s)));
    CHECK_FALSE(gen.unreachable_domain(chain({{"Tanh", attrs{}}, {"Asin", attrs{}}, {"Sqrt", attrs{}}}, s)));
    // Two readers of one value whose domains do not overlap (|x| <= 1 and x >= 1 meet in one point).
    auto both = chain({{"Asin", attrs{}}}, s);
    to::graph::node acosh;
    acosh.op_type = "Acosh";
    acosh.inputs = {"v0"};
    acosh.outputs = {"w"};
    both.model.nodes.push_back(acosh);
    both.shapes.emplace("w", s);
    const auto why = gen.unreachable_domain(both);
    REQUIRE(why);
    CHECK(why->find("Acosh") != std::string::npos);
}

namespace {
/// A sketch of f32 values: free inputs (name, shape), then nodes (op, attributes,
/// input names, output name, output shape); every value's shape and dtype recorded.
struct sketch_builder {
    to::gen::graph_sketch s;
    sketch_builder& input(const std::string& name, const to::shape_type& shape) {
        s.model.inputs.push_back({name, to::dtype::f32, shape});
        s.shapes.emplace(name, shape);
        s.dtypes.emplace(name, to::dtype::f32);
        return *this;
    }
    sketch_builder& node(const std::string& op, to::spec::attribute_map attrs, std::vector<std::string> inputs,
                         const std::string& out, const to::shape_type& shape) {
        to::graph::node n;
        n.op_type = op;
        n.attributes = std::move(attrs);
        n.inputs = std::move(inputs);
        n.outputs = {out};
        s.model.nodes.push_back(n);
        s.shapes.emplace(out, shape);
        s.dtypes.emplace(out, to::dtype::f32);
        return *this;
    }
};
/// Fixed int64 data (shape-like inputs, pads) the generator would have made.
void fixed_i64(sketch_builder& b, const std::string& name, std::vector<std::int64_t> v) {
    auto t = to::tensor::zeros(to::dtype::i64, to::shape_type{v.size()});
    std::copy(v.begin(), v.end(), t.values<std::int64_t>().begin());
    b.s.model.initializers.emplace(name, t);
    b.s.fixed.insert(name);
    b.s.shapes.emplace(name, to::shape_type{v.size()});
    b.s.dtypes.emplace(name, to::dtype::i64);
}
}  // namespace

TEST_CASE("generator: value facts from shapes (reduction groups, untouched Conv outputs, one-element rows)") {
    const to::gen::generator gen(to::gen::config{});
    using attrs = to::spec::attribute_map;
    using ints = std::vector<std::int64_t>;
    // A sum of n values of Sigmoid(Tanh(x)), each in [0.27, 0.73]: n = 4,096 overflows Exp
    // in float32 whatever x is (the sum is >= 1,101); n = 64 does not (17 to 47).
    auto sum_then_exp = [](std::size_t rows) {
        sketch_builder b;
        b.input("x", {rows, 64})
            .node("Tanh", {}, {"x"}, "t", {rows, 64})
            .node("Sigmoid", {}, {"t"}, "s", {rows, 64})
            .node("ReduceSum", attrs{{"keepdims", std::int64_t{0}}}, {"s"}, "r", {})
            .node("Exp", {}, {"r"}, "e", {});
        return b.s;
    };
    const auto why = gen.unreachable_domain(sum_then_exp(64));
    REQUIRE(why);
    CHECK(why->find("Exp") != std::string::npos);
    CHECK_FALSE(gen.unreachable_domain(sum_then_exp(1)));
    // A log-sum-exp of n values in [-1, 1] is at least log n - 1: Atanh needs it below 1.
    auto lse_then_atanh = [](std::size_t n) {
        sketch_builder b;
        b.input("x", {n})
            .node("Tanh", {}, {"x"}, "t", {n})
            .node("ReduceLogSumExp", attrs{{"keepdims", std::int64_t{0}}}, {"t"}, "l", {})
            .node("Atanh", {}, {"l"}, "a", {});
        return b.s;
    };
    CHECK(gen.unreachable_domain(lse_then_atanh(53)));
    CHECK_FALSE(gen.unreachable_domain(lse_then_atanh(2)));
    // 0 / y is 0: a Log of it fails; Mul by a value that is always 0 too (its corners are taken at finite values).
    const to::shape_type s{4, 3};
    auto zero_then = [&](const std::string& op, bool zero_first) {
        sketch_builder b;  // z: a LayerNormalization over rows of one element, without B: all 0
        b.input("x", {4, 1}).input("scale", {1}).input("y", s);
        b.node("LayerNormalization", attrs{{"axis", std::int64_t{-1}}}, {"x", "scale"}, "z", {4, 1})
            .node(op, {}, zero_first ? std::vector<std::string>{"z", "y"} : std::vector<std::string>{"y", "z"}, "q", s)
            .node("Log", {}, {"q"}, "l", s);
        return b.s;
    };
    CHECK(gen.unreachable_domain(zero_then("Div", true)));
    CHECK(gen.unreachable_domain(zero_then("Mul", true)));
    CHECK(gen.unreachable_domain(zero_then("Mul", false)));
    CHECK_FALSE(gen.unreachable_domain(zero_then("Add", true)));
    // A LogSoftmax over an axis of one element is 0, and so is any sum of its squares.
    auto log_softmax_squares = [](std::size_t n) {
        sketch_builder b;
        b.input("x", {4, n})
            .node("LogSoftmax", attrs{{"axis", std::int64_t{1}}}, {"x"}, "l", {4, n})
            .node("ReduceSumSquare", attrs{{"keepdims", std::int64_t{0}}}, {"l"}, "q", {})
            .node("Log", {}, {"q"}, "y", {});
        return b.s;
    };
    CHECK(gen.unreachable_domain(log_softmax_squares(1)));
    CHECK_FALSE(gen.unreachable_domain(log_softmax_squares(3)));

    // Without B, outputs that no tap reaches are 0 for every data: a Reciprocal of them fails.
    auto conv_then_reciprocal = [](const std::string& op, const attrs& a, std::size_t out, bool bias) {
        sketch_builder b;
        b.input("x", {1, 1, 4}).input("w", {1, 1, 1});
        std::vector<std::string> in{"x", "w"};
        if (bias) {
            b.input("b", {1});
            in.emplace_back("b");
        }
        b.node(op, a, in, "y", {1, 1, out}).node("Reciprocal", {}, {"y"}, "r", {1, 1, out});
        return b.s;
    };
    CHECK(gen.unreachable_domain(conv_then_reciprocal("ConvTranspose", attrs{{"strides", ints{2}}}, 7, false)));
    CHECK_FALSE(gen.unreachable_domain(conv_then_reciprocal("ConvTranspose", attrs{{"strides", ints{1}}}, 4, false)));
    CHECK_FALSE(gen.unreachable_domain(conv_then_reciprocal("ConvTranspose", attrs{{"strides", ints{2}}}, 7, true)));
    CHECK(gen.unreachable_domain(conv_then_reciprocal("Conv", attrs{{"pads", ints{2, 2}}}, 8, false)));
    CHECK_FALSE(gen.unreachable_domain(conv_then_reciprocal("Conv", attrs{{"pads", ints{0, 0}}}, 4, false)));
    CHECK_FALSE(gen.unreachable_domain(conv_then_reciprocal("Conv", attrs{{"pads", ints{2, 2}}}, 8, true)));
    // With B, such an output is its channel's bias, in every channel: a B forced to
    // hold a 0 (a Hardmax over 3 channels) puts a 0 there.
    auto conv_hardmax_bias = [](const std::string& op, const attrs& a, std::size_t out) {
        sketch_builder b;
        b.input("x", {1, 1, 4}).input("w", {op == "Conv" ? 3u : 1u, op == "Conv" ? 1u : 3u, 1}).input("c", {3});
        b.node("Hardmax", {}, {"c"}, "b", {3})
            .node(op, a, {"x", "w", "b"}, "y", {1, 3, out})
            .node("Reciprocal", {}, {"y"}, "r", {1, 3, out});
        return b.s;
    };
    const auto bias_zero = gen.unreachable_domain(conv_hardmax_bias("Conv", attrs{{"pads", ints{2, 2}}}, 8));
    REQUIRE(bias_zero);
    CHECK(bias_zero->find("Reciprocal") != std::string::npos);
    CHECK(gen.unreachable_domain(conv_hardmax_bias("ConvTranspose", attrs{{"strides", ints{2}}}, 7)));
    CHECK_FALSE(gen.unreachable_domain(conv_hardmax_bias("Conv", attrs{{"pads", ints{0, 0}}}, 4)));
    CHECK_FALSE(gen.unreachable_domain(conv_hardmax_bias("ConvTranspose", attrs{{"strides", ints{1}}}, 4)));

    // Normalizing rows of one element leaves x - mean = 0: Y is B, or 0 without it.
    auto layer_norm_then_log = [](std::size_t n, bool bias) {
        sketch_builder b;
        b.input("x", {4, n}).input("scale", {n});
        std::vector<std::string> in{"x", "scale"};
        if (bias) {
            b.input("b", {n});
            in.emplace_back("b");
        }
        b.node("LayerNormalization", attrs{{"axis", std::int64_t{-1}}}, in, "y", {4, n}).node("Log", {}, {"y"}, "l", {4, n});
        return b.s;
    };
    CHECK(gen.unreachable_domain(layer_norm_then_log(1, false)));
    CHECK_FALSE(gen.unreachable_domain(layer_norm_then_log(1, true)));
    CHECK_FALSE(gen.unreachable_domain(layer_norm_then_log(3, false)));

    // An exclusive CumSum along an axis of one element is all 0 (ReduceLogSum needs a positive sum).
    CHECK(gen.unreachable_domain(chain({{"CumSum", attrs{{"exclusive", std::int64_t{1}}}}, {"ReduceLogSum", attrs{}}}, {1, 1})));
    {
        sketch_builder b;  // (chain would give the reduction its input's shape: groups of one)
        b.input("x", {1, 3})
            .node("CumSum", attrs{{"exclusive", std::int64_t{1}}}, {"x"}, "c", {1, 3})
            .node("ReduceLogSum", attrs{}, {"c"}, "r", {1, 1});
        CHECK_FALSE(gen.unreachable_domain(b.s));
    }

    // LRN over one channel is element-wise: Exp(Hardmax)'s forced 1 becomes 1 / 2^0.75 < 1, which Acosh cannot take.
    CHECK(gen.unreachable_domain(chain(
        {{"Hardmax", attrs{}}, {"Exp", attrs{}}, {"LRN", attrs{{"size", std::int64_t{1}}, {"bias", 2.0}}}, {"Acosh", attrs{}}}, s)));
    CHECK_FALSE(gen.unreachable_domain(chain(
        {{"Hardmax", attrs{}}, {"Exp", attrs{}}, {"LRN", attrs{{"size", std::int64_t{3}}, {"bias", 2.0}}}, {"Acosh", attrs{}}}, s)));

    // Integers: Round, Floor and Sign give them, and Atanh's (-1, 1) holds only 0 of them,
    // which a Reciprocal (or a Log) of the Atanh cannot take; Asin's [-1, 1] holds three.
    CHECK(gen.unreachable_domain(chain({{"Round", attrs{}}, {"Atanh", attrs{}}, {"Reciprocal", attrs{}}}, s)));
    CHECK(gen.unreachable_domain(chain({{"Floor", attrs{}}, {"Relu", attrs{}}, {"Atanh", attrs{}}, {"Log", attrs{}}}, s)));
    CHECK(gen.unreachable_domain(chain({{"Sign", attrs{}}, {"Atanh", attrs{}}, {"Log", attrs{}}}, s)));
    CHECK_FALSE(gen.unreachable_domain(chain({{"Round", attrs{}}, {"Atanh", attrs{}}}, s)));
    CHECK_FALSE(gen.unreachable_domain(chain({{"Round", attrs{}}, {"Asin", attrs{}}, {"Reciprocal", attrs{}}}, s)));
    CHECK_FALSE(gen.unreachable_domain(chain({{"Tanh", attrs{}}, {"Atanh", attrs{}}, {"Reciprocal", attrs{}}}, s)));
    // A mean of integers is not one: nothing is concluded through ReduceMean.
    CHECK_FALSE(gen.unreachable_domain(chain({{"Round", attrs{}}, {"ReduceMean", attrs{}}, {"Atanh", attrs{}}, {"Reciprocal", attrs{}}}, s)));

    // Nearest and linear Resize stay within X's range (Erf's [-1, 1] never reaches Acosh's x > 1); cubic overshoots.
    CHECK(gen.unreachable_domain(chain({{"Erf", attrs{}}, {"Resize", attrs{{"mode", std::string("nearest")}}}, {"Acosh", attrs{}}}, s)));
    CHECK(gen.unreachable_domain(chain({{"Erf", attrs{}}, {"Resize", attrs{{"mode", std::string("linear")}}}, {"Acosh", attrs{}}}, s)));
    CHECK_FALSE(gen.unreachable_domain(chain({{"Erf", attrs{}}, {"Resize", attrs{{"mode", std::string("cubic")}}}, {"Acosh", attrs{}}}, s)));
}

TEST_CASE("generator: an integer Erf's free input is drawn from 6 up, where it is not 0") {
    to::gen::config cfg;
    cfg.include_ops = {"Erf"};
    cfg.dtypes = {to::dtype::i32};
    cfg.max_nodes = 1;
    const to::gen::generator gen(cfg);
    to::gen::generation_stats stats;
    std::size_t seen = 0;
    for (std::uint64_t i = 0; i < 8; ++i) {
        auto g = to::gen::case_rng(5, i, cfg.hash());
        const auto sk = gen.generate(g, stats);
        for (const auto& [name, range] : sk.ranges) {
            CHECK(range == std::make_pair(6.0, 12.0));
            ++seen;
        }
    }
    CHECK(seen > 0);
    // Float data keeps the default range (a float Erf is not flat near 0).
    const auto h = to::ops::find_op("Erf")->hints();
    REQUIRE(h.input(0) != nullptr);
    CHECK_FALSE(h.input(0)->range);
}

TEST_CASE("generator: integer domains, and integer values' forced elements") {
    const to::gen::generator gen(to::gen::config{});
    const to::shape_type s{4, 3};
    // base = fixed all-zero data of dtype `base`, y = a free f32 input, z = Pow(base, y).
    auto pow_of_zeros = [&](to::dtype base) {
        to::gen::graph_sketch sk;
        sk.model.initializers.emplace("b", to::tensor::zeros(base, s));
        sk.fixed.insert("b");
        sk.model.inputs.push_back({"y", to::dtype::f32, s});
        to::graph::node n;
        n.op_type = "Pow";
        n.inputs = {"b", "y"};
        n.outputs = {"z"};
        sk.model.nodes.push_back(n);
        sk.model.outputs.push_back({"z", base, s});
        for (const auto* v : {"b", "y", "z"}) sk.shapes.emplace(v, s);
        sk.dtypes = {{"b", base}, {"y", to::dtype::f32}, {"z", base}};
        return sk;
    };
    // 0 to a power Y >= 0 is defined for an integer base; a floating base keeps NNSmith's X > 0.
    CHECK_FALSE(gen.unreachable_domain(pow_of_zeros(to::dtype::i32)));
    CHECK_FALSE(gen.unreachable_domain(pow_of_zeros(to::dtype::i64)));
    const auto why = gen.unreachable_domain(pow_of_zeros(to::dtype::f32));
    REQUIRE(why);
    CHECK(why->find("X > 0") != std::string::npos);

    // An exclusive CumSum's leading 0 is forced in int32 too, although its sum's range is not known.
    to::gen::graph_sketch sk;
    sk.model.inputs.push_back({"x", to::dtype::i32, s});
    auto axis = to::tensor::zeros(to::dtype::i64, {});
    axis.values<std::int64_t>()[0] = 1;
    sk.model.initializers.emplace("axis", axis);
    sk.fixed.insert("axis");
    to::graph::node cumsum;
    cumsum.op_type = "CumSum";
    cumsum.inputs = {"x", "axis"};
    cumsum.outputs = {"c"};
    cumsum.attributes = {{"exclusive", std::int64_t{1}}};
    to::graph::node div;
    div.op_type = "Div";
    div.inputs = {"x", "c"};
    div.outputs = {"q"};
    sk.model.nodes = {cumsum, div};
    sk.model.outputs.push_back({"q", to::dtype::i32, s});
    for (const auto* v : {"x", "c", "q"}) sk.shapes.emplace(v, s);
    sk.shapes.emplace("axis", to::shape_type{});
    sk.dtypes = {{"x", to::dtype::i32}, {"c", to::dtype::i32}, {"q", to::dtype::i32}, {"axis", to::dtype::i64}};
    const auto div_why = gen.unreachable_domain(sk);
    REQUIRE(div_why);
    CHECK(div_why->find("Div") != std::string::npos);
    sk.model.nodes[0].attributes = {{"exclusive", std::int64_t{0}}};
    CHECK_FALSE(gen.unreachable_domain(sk));
    // Forced values outside the dtype, or not whole numbers, are dropped.
    auto f = to::spec::value_facts::within(-1e30, 1e30);
    f.force(0.0).force(3e10).force(0.5);
    CHECK(f.of_dtype(to::dtype::i32).forced == std::vector<double>{0.0});
    CHECK(f.of_dtype(to::dtype::i32).lo == -2147483648.0);
}

TEST_CASE("generator: value facts of norms, casts, LRN and Max/Min/Add put more domains out of reach") {
    const to::gen::generator gen(to::gen::config{});
    using attrs = to::spec::attribute_map;
    // An L2-normalized row of 5 has an element <= 1/sqrt(5): Acosh (x >= 1) cannot take it.
    CHECK(gen.unreachable_domain(chain({{"LpNormalization", attrs{}}, {"Acosh", attrs{}}}, {4, 5})));
    CHECK(gen.unreachable_domain(chain({{"LpNormalization", attrs{{"p", std::int64_t{1}}}}, {"Acosh", attrs{}}}, {4, 5})));
    CHECK_FALSE(gen.unreachable_domain(chain({{"LpNormalization", attrs{}}, {"Asin", attrs{}}}, {4, 5})));
    // Element bounds pass monotone ops: a LogSoftmax row of 36 has one <= -log 36, Asinh keeps it below -1.
    CHECK(gen.unreachable_domain(chain({{"LogSoftmax", attrs{}}, {"Asinh", attrs{}}, {"Asin", attrs{}}}, {4, 36})));
    CHECK_FALSE(gen.unreachable_domain(chain({{"LogSoftmax", attrs{}}, {"Asinh", attrs{}}, {"Asin", attrs{}}}, {4, 2})));
    // ... and a decreasing one turns "some <= m" into "some >= -m".
    CHECK(gen.unreachable_domain(chain({{"LogSoftmax", attrs{}}, {"Neg", attrs{}}, {"Acos", attrs{}}}, {4, 36})));
    // LRN with bias > 1 shrinks values: Floor of a Softmax row (a 0 in every row) stays below Acosh's 1.
    const attrs lrn{{"size", std::int64_t{1}}, {"bias", 2.0}};
    CHECK(gen.unreachable_domain(chain({{"Softmax", attrs{}}, {"Floor", attrs{}}, {"LRN", lrn}, {"Acosh", attrs{}}}, {2, 3, 7})));
    CHECK_FALSE(gen.unreachable_domain(chain({{"Relu", attrs{}}, {"LRN", lrn}, {"Acosh", attrs{}}}, {2, 3, 7})));
    // EyeLike with k off the matrix is all zeros: LpNormalization's norm is 0.
    CHECK(gen.unreachable_domain(chain({{"EyeLike", attrs{{"k", std::int64_t{5}}}}, {"LpNormalization", attrs{}}}, {4, 3})));
    CHECK_FALSE(gen.unreachable_domain(chain({{"EyeLike", attrs{{"k", std::int64_t{1}}}}, {"LpNormalization", attrs{}}}, {4, 3})));

    // Two-input ops from the corners of their inputs, after Acosh narrowed v0 to [1, inf).
    auto after_acosh = [](const std::string& op, bool two_inputs, const std::string& reader) {
        auto sk = chain({{"Acosh", attrs{}}}, {4, 3});
        to::graph::node n;
        n.op_type = op;
        n.inputs = two_inputs ? std::vector<std::string>{"v0", "v0"} : std::vector<std::string>{"v0"};
        n.outputs = {"w"};
        sk.model.nodes.push_back(n);
        to::graph::node r;
        r.op_type = reader;
        r.inputs = {"w"};
        r.outputs = {"z"};
        sk.model.nodes.push_back(r);
        sk.shapes.emplace("w", to::shape_type{4, 3});
        sk.shapes.emplace("z", to::shape_type{4, 3});
        return sk;
    };
    CHECK(gen.unreachable_domain(after_acosh("Max", true, "Atanh")));  // [1, inf) vs (-1, 1)
    CHECK(gen.unreachable_domain(after_acosh("Max", false, "Atanh")));
    CHECK(gen.unreachable_domain(after_acosh("Min", true, "Atanh")));
    CHECK(gen.unreachable_domain(after_acosh("Add", true, "Atanh")));  // [2, inf)
    CHECK(gen.unreachable_domain(after_acosh("Mul", true, "Atanh")));  // [1, inf)
    CHECK_FALSE(gen.unreachable_domain(after_acosh("Sub", true, "Atanh")));  // x - x is 0, inside (-1, 1)
    CHECK(gen.unreachable_domain(after_acosh("Sub", true, "Log")));          // ... and not above 0
    CHECK_FALSE(gen.unreachable_domain(after_acosh("Max", true, "Log")));

    // Bool data is 0 or 1: Cast of it, negated, has no positive term for ReduceLogSum.
    auto from_bool = [](bool negate) {
        to::gen::graph_sketch sk;
        sk.model.inputs.push_back({"b", to::dtype::boolean, to::shape_type{4, 3}});
        sk.dtypes.emplace("b", to::dtype::boolean);
        std::vector<std::pair<std::string, attrs>> ops{{"Cast", attrs{{"to", std::int64_t{1}}}}};
        if (negate) ops.push_back({"Neg", attrs{}});
        ops.push_back({"ReduceLogSum", attrs{}});
        std::string prev = "b";
        for (std::size_t k = 0; k < ops.size(); ++k) {
            to::graph::node n;
            n.op_type = ops[k].first;
            n.attributes = ops[k].second;
            n.inputs = {prev};
            prev = "c" + std::to_string(k);
            n.outputs = {prev};
            sk.model.nodes.push_back(n);
            sk.shapes.emplace(prev, to::shape_type{4, 3});
            sk.dtypes.emplace(prev, to::dtype::f32);
        }
        sk.shapes.emplace("b", to::shape_type{4, 3});
        return sk;
    };
    CHECK(gen.unreachable_domain(from_bool(true)));
    CHECK_FALSE(gen.unreachable_domain(from_bool(false)));
}

TEST_CASE("generator: copies share their facts, x - x is 0, forced values pass Mul, Pad and LayerNormalization") {
    const to::gen::generator gen(to::gen::config{});
    using attrs = to::spec::attribute_map;
    const to::shape_type s{4, 3};
    // A copy of x (Reshape, Transpose, Identity) holds x's elements: Atanh of the copy and
    // Acosh of x leave nothing, whichever reads first; Log of x and Atanh of the copy leave (0, 1).
    auto two_readers = [&](const std::string& copy, bool copy_first, const std::string& other) {
        sketch_builder b;
        b.input("x", s);
        std::vector<std::string> in{"x"};
        to::shape_type out = s;
        if (copy == "Reshape") {
            fixed_i64(b, "shape", {3, 4});
            in.push_back("shape");
            out = {3, 4};
        }
        if (copy == "Transpose") out = {3, 4};
        b.node(copy, {}, in, "c", out);
        if (copy_first) {
            b.node("Atanh", {}, {"c"}, "a", out).node(other, {}, {"x"}, "h", s);
        } else {
            b.node(other, {}, {"x"}, "h", s).node("Atanh", {}, {"c"}, "a", out);
        }
        return b.s;
    };
    for (const char* copy : {"Reshape", "Transpose", "Identity"}) {
        CAPTURE(copy);
        CHECK(gen.unreachable_domain(two_readers(copy, true, "Acosh")));
        CHECK(gen.unreachable_domain(two_readers(copy, false, "Acosh")));
        CHECK_FALSE(gen.unreachable_domain(two_readers(copy, true, "Log")));
        CHECK_FALSE(gen.unreachable_domain(two_readers(copy, false, "Log")));
    }
    // Sub(x, x) is 0 and Div(x, x) is 1 whatever x holds; Sub(x, y) is anything.
    auto same_operands = [&](const std::string& op, const std::string& second, const std::string& reader) {
        sketch_builder b;
        b.input("x", s).input("y", s).node(op, {}, {"x", second}, "d", s).node(reader, {}, {"d"}, "r", s);
        return b.s;
    };
    CHECK(gen.unreachable_domain(same_operands("Sub", "x", "Log")));
    CHECK_FALSE(gen.unreachable_domain(same_operands("Sub", "y", "Log")));
    CHECK(gen.unreachable_domain(same_operands("Div", "x", "Atanh")));
    CHECK_FALSE(gen.unreachable_domain(same_operands("Div", "x", "Log")));
    // Hardmax holds a 0 beside each 1: times anything it is still 0 there, plus anything it is not;
    // Min of one input is that input.
    auto hardmax_then = [&](const std::string& op, bool two) {
        sketch_builder b;
        b.input("x", s).input("y", s).node("Hardmax", {}, {"y"}, "h", s);
        b.node(op, {}, two ? std::vector<std::string>{"x", "h"} : std::vector<std::string>{"h"}, "m", s);
        b.node("Log", {}, {"m"}, "l", s);
        return b.s;
    };
    CHECK(gen.unreachable_domain(hardmax_then("Mul", true)));
    CHECK(gen.unreachable_domain(hardmax_then("Min", false)));
    CHECK_FALSE(gen.unreachable_domain(hardmax_then("Add", true)));
    CHECK(gen.unreachable_domain(hardmax_then("Clip", false)));  // no bounds: the same zeros
    {
        sketch_builder b;  // a free lower bound may lift them
        b.input("y", s).input("lo", {}).node("Hardmax", {}, {"y"}, "h", s).node("Clip", {}, {"h", "lo"}, "m", s);
        b.node("Log", {}, {"m"}, "l", s);
        CHECK_FALSE(gen.unreachable_domain(b.s));
    }
    // Pad's 0 is there when an output dim is longer than the input's; pads of 0 add none.
    auto pad_then_reciprocal = [&](std::vector<std::int64_t> pads, const to::shape_type& out) {
        sketch_builder b;
        b.input("x", s);
        fixed_i64(b, "pads", std::move(pads));
        b.node("Pad", attrs{{"mode", std::string("constant")}}, {"x", "pads"}, "p", out).node("Reciprocal", {}, {"p"}, "r", out);
        return b.s;
    };
    CHECK(gen.unreachable_domain(pad_then_reciprocal({1, 0, 1, 0}, {6, 3})));
    CHECK_FALSE(gen.unreachable_domain(pad_then_reciprocal({0, 0, 0, 0}, s)));
    // A positive pad pads even where a negative one crops the axis back: [1, -1] shifts the
    // last row out and a 0 in; all-negative pads only crop.
    CHECK(gen.unreachable_domain(pad_then_reciprocal({1, 0, -1, 0}, s)));
    CHECK(gen.unreachable_domain(pad_then_reciprocal({0, -2, 0, 2}, s)));
    CHECK_FALSE(gen.unreachable_domain(pad_then_reciprocal({-1, 0, 0, -1}, {3, 2})));
    // A LayerNormalization row without B sums to 0 times its Scale: with one Scale value, or
    // Scales of one sign, some element is <= 0 and Log fails; with B, or Scales of both signs, not.
    auto layer_norm_then_log = [&](const to::shape_type& scale, bool relu_scale, bool bias) {
        sketch_builder b;
        b.input("x", s).input("scale", scale).input("b", {3});
        std::string sc = "scale";
        if (relu_scale) {
            b.node("Relu", {}, {"scale"}, "rs", scale);
            sc = "rs";
        }
        std::vector<std::string> in{"x", sc};
        if (bias) in.push_back("b");
        b.node("LayerNormalization", attrs{{"axis", std::int64_t{-1}}}, in, "n", s).node("Log", {}, {"n"}, "l", s);
        return b.s;
    };
    // Gaps: an Lp-normalized row of one element is -1 or 1 (1 for x >= 0), ThresholdedRelu is 0 or above alpha.
    const to::shape_type col{4, 1};
    CHECK(gen.unreachable_domain(chain({{"LpNormalization", attrs{}}, {"Atanh", attrs{}}}, col)));
    CHECK(gen.unreachable_domain(chain({{"LpNormalization", attrs{{"p", std::int64_t{1}}}}, {"Asin", attrs{}}, {"Atanh", attrs{}}}, col)));
    CHECK_FALSE(gen.unreachable_domain(chain({{"LpNormalization", attrs{}}, {"Asin", attrs{}}}, col)));
    CHECK_FALSE(gen.unreachable_domain(chain({{"LpNormalization", attrs{}}, {"Atanh", attrs{}}}, {4, 2})));
    CHECK(gen.unreachable_domain(chain({{"Relu", attrs{}}, {"Neg", attrs{}}, {"LpNormalization", attrs{}}, {"Sqrt", attrs{}}}, col)));
    CHECK_FALSE(gen.unreachable_domain(chain({{"Relu", attrs{}}, {"LpNormalization", attrs{}}, {"Sqrt", attrs{}}}, col)));
    // A rule needed of some element per group needs it of every element when groups hold one:
    // Hardmax's zeros (along axis 0) fail LpNormalization over rows of one and ReduceLogSum over a dim of 1.
    auto hardmax_along_0 = [&](const std::string& op, const attrs& a, const to::shape_type& shape, const to::shape_type& out) {
        sketch_builder b;
        b.input("x", shape).node("Hardmax", attrs{{"axis", std::int64_t{0}}}, {"x"}, "h", shape).node(op, a, {"h"}, "y", out);
        return b.s;
    };
    CHECK(gen.unreachable_domain(hardmax_along_0("LpNormalization", attrs{}, {4, 1}, {4, 1})));
    CHECK_FALSE(gen.unreachable_domain(hardmax_along_0("LpNormalization", attrs{}, {2, 3}, {2, 3})));
    CHECK_FALSE(gen.unreachable_domain(hardmax_along_0("LpNormalization", attrs{{"axis", std::int64_t{0}}}, {4, 1}, {4, 1})));
    CHECK(gen.unreachable_domain(hardmax_along_0("ReduceLogSum", attrs{{"axes", std::vector<std::int64_t>{1}}}, {4, 1}, {4, 1})));
    CHECK_FALSE(gen.unreachable_domain(hardmax_along_0("ReduceLogSum", attrs{{"axes", std::vector<std::int64_t>{0}}}, {4, 1}, {1, 1})));
    auto thresholded = [&](double alpha) {
        return chain({{"ThresholdedRelu", attrs{{"alpha", alpha}}}, {"Atanh", attrs{}}, {"Tanh", attrs{}}, {"Reciprocal", attrs{}}}, s);
    };
    CHECK(gen.unreachable_domain(thresholded(1.0)));
    CHECK_FALSE(gen.unreachable_domain(thresholded(0.5)));
    CHECK(gen.unreachable_domain(layer_norm_then_log({1}, false, false)));
    CHECK(gen.unreachable_domain(layer_norm_then_log({3}, true, false)));
    CHECK_FALSE(gen.unreachable_domain(layer_norm_then_log({3}, false, false)));
    CHECK_FALSE(gen.unreachable_domain(layer_norm_then_log({1}, false, true)));
}

TEST_CASE("generator: shapes, indices and overflow limits of the dtype put domains out of reach") {
    const to::gen::generator gen(to::gen::config{});
    using attrs = to::spec::attribute_map;
    // Sinh of a dim of 64 as float16 overflows (sinh(64) > 65504); of a dim of 3 it does not.
    auto sinh_of_shape = [](std::size_t dim, std::int64_t to_dtype) {
        to::gen::graph_sketch sk;
        sk.model.inputs.push_back({"x", to::dtype::f32, to::shape_type{dim}});
        sk.shapes.emplace("x", to::shape_type{dim});
        sk.dtypes.emplace("x", to::dtype::f32);
        const std::vector<std::tuple<std::string, attrs, to::dtype>> ops{
            {"Shape", attrs{}, to::dtype::i64}, {"Cast", attrs{{"to", to_dtype}}, to::dtype_from_onnx(static_cast<int>(to_dtype))},
            {"Sinh", attrs{}, to::dtype_from_onnx(static_cast<int>(to_dtype))}};
        std::string prev = "x";
        for (std::size_t k = 0; k < ops.size(); ++k) {
            to::graph::node n;
            n.op_type = std::get<0>(ops[k]);
            n.attributes = std::get<1>(ops[k]);
            n.inputs = {prev};
            prev = "s" + std::to_string(k);
            n.outputs = {prev};
            sk.model.nodes.push_back(n);
            sk.shapes.emplace(prev, to::shape_type{1});
            sk.dtypes.emplace(prev, std::get<2>(ops[k]));
        }
        return sk;
    };
    const auto why = gen.unreachable_domain(sinh_of_shape(64, 10));
    REQUIRE(why);
    CHECK(why->find("Sinh") != std::string::npos);
    CHECK_FALSE(gen.unreachable_domain(sinh_of_shape(3, 10)));
    CHECK_FALSE(gen.unreachable_domain(sinh_of_shape(64, 1)));  // float32 holds sinh(64)
    // ReduceLogSumExp of an integer Size: LSE >= every element, so a count above
    // log(max double) = 709.8 overflows (the rule judges integers in double).
    auto lse_of_size = [](const to::shape_type& s) {
        to::gen::graph_sketch sk;
        sk.model.inputs.push_back({"x", to::dtype::i64, s});
        sk.shapes.emplace("x", s);
        sk.dtypes.emplace("x", to::dtype::i64);
        sk.model.nodes.push_back(make_node("Size", {"x"}, "n"));
        sk.model.nodes.push_back(make_node("ReduceLogSumExp", {"n"}, "y", attrs{{"keepdims", std::int64_t{0}}}));
        for (const char* v : {"n", "y"}) {
            sk.shapes.emplace(v, to::shape_type{});
            sk.dtypes.emplace(v, to::dtype::i64);
        }
        return sk;
    };
    const auto lse = gen.unreachable_domain(lse_of_size({6, 12, 13, 5}));
    REQUIRE(lse);
    CHECK(lse->find("ReduceLogSumExp") != std::string::npos);
    CHECK_FALSE(gen.unreachable_domain(lse_of_size({6, 12})));
    // ArgMax over an axis of one element is all zeros: no reciprocal of it.
    const attrs axis1{{"axis", std::int64_t{1}}};
    CHECK(gen.unreachable_domain(
        chain({{"ArgMax", axis1}, {"Cast", attrs{{"to", std::int64_t{1}}}}, {"Reciprocal", attrs{}}}, {4, 1})));
    CHECK_FALSE(gen.unreachable_domain(
        chain({{"ArgMax", axis1}, {"Cast", attrs{{"to", std::int64_t{1}}}}, {"Reciprocal", attrs{}}}, {4, 3})));
    // A cast to uint8 needs its floating input in (-1, 256) (truncation first): Neg of a
    // Sigmoid, in [-1, 0], becomes 0 inside (-1, 0]; Neg of Exp of Abs is -1 or below.
    auto cast_u8 = [&](std::vector<std::pair<std::string, attrs>> ops, bool typed) {
        ops.push_back({"Cast", attrs{{"to", std::int64_t{2}}}});
        auto sk = chain(ops, {4, 3});
        if (typed) {
            for (std::size_t k = 0; k < ops.size(); ++k) sk.dtypes.emplace("v" + std::to_string(k), to::dtype::f32);
        }
        return sk;
    };
    CHECK(gen.unreachable_domain(cast_u8({{"Abs", attrs{}}, {"Exp", attrs{}}, {"Neg", attrs{}}}, true)));
    CHECK_FALSE(gen.unreachable_domain(cast_u8({{"Sigmoid", attrs{}}, {"Neg", attrs{}}}, true)));
    CHECK_FALSE(gen.unreachable_domain(cast_u8({{"Sigmoid", attrs{}}}, true)));
    CHECK_FALSE(  // dtype unknown: no rule
        gen.unreachable_domain(cast_u8({{"Abs", attrs{}}, {"Exp", attrs{}}, {"Neg", attrs{}}}, false)));
    // TopK of one value repeated: ties take the lowest indices, so index 0 is always there.
    const auto topk = to::ops::find_op("TopK")->hints();
    const std::vector<to::shape_type> topk_shapes{{4, 3}, {1}};
    const std::vector<to::spec::value_facts> same{to::spec::value_facts::constant(2.0), to::spec::value_facts::constant(2.0)};
    const auto idx = topk.output_facts(same, {}, topk_shapes);
    REQUIRE(idx.size() == 2);
    CHECK(idx[1].forced == std::vector<double>{0.0});
    CHECK(idx[1].hi == 2.0);
    const std::vector<to::spec::value_facts> varied{to::spec::value_facts::within(0.0, 1.0), to::spec::value_facts::constant(2.0)};
    CHECK(topk.output_facts(varied, {}, topk_shapes)[1].forced.empty());
    // Size is the element count.
    const std::vector<to::shape_type> shape{{4, 5}};
    const auto size = to::ops::find_op("Size")->hints().output_facts({}, {}, shape);
    CHECK(size[0].lo == 20.0);
    CHECK(size[0].hi == 20.0);
    // LayerNormalization's InvStdDev of data in [0, 1]: the variance is at most 1/4.
    const std::vector<to::spec::value_facts> unit{to::spec::value_facts::within(0.0, 1.0)};
    const auto ln = to::ops::find_op("LayerNormalization")->hints().output_facts(unit, {{"epsilon", 1e-5}}, shape);
    REQUIRE(ln.size() == 3);
    CHECK(ln[0].is_unknown());
    CHECK(ln[1].lo == 0.0);
    CHECK(ln[1].hi == 1.0);
    CHECK(ln[2].lo > 1.9);
    CHECK(ln[2].hi > 300.0);
    // Clip to [lo, hi] bounds its output; PRelu of non-negative data is the data.
    const std::vector<to::spec::value_facts> clip_in{to::spec::value_facts{}, to::spec::value_facts::constant(-1.0),
                                                     to::spec::value_facts::constant(2.0)};
    const auto clip = to::ops::find_op("Clip")->hints().output_facts(clip_in, {}, shape);
    CHECK(clip[0].lo == -1.0);
    CHECK(clip[0].hi == 2.0);
    const std::vector<to::spec::value_facts> prelu_in{to::spec::value_facts::within(0.5, 3.0), to::spec::value_facts{}};
    CHECK(to::ops::find_op("PRelu")->hints().output_facts(prelu_in, {}, shape)[0].lo == 0.5);
    const std::vector<to::spec::value_facts> prelu_neg{to::spec::value_facts::within(-0.5, 3.0), to::spec::value_facts{}};
    CHECK(to::ops::find_op("PRelu")->hints().output_facts(prelu_neg, {}, shape)[0].is_unknown());
}

TEST_CASE("value facts: casts truncate to integers, corners give sums and products, dtypes bound integer data") {
    const auto cast = to::ops::find_op("Cast")->hints();
    const std::vector<to::shape_type> shapes{{3}};
    const std::vector<to::spec::value_facts> fraction{to::spec::value_facts::within(0.2, 0.8)};
    const auto as_int = cast.output_facts(fraction, {{"to", std::int64_t{7}}}, shapes);
    CHECK(as_int[0].lo == 0.0);
    CHECK(as_int[0].hi == 0.0);
    const auto as_float = cast.output_facts(fraction, {{"to", std::int64_t{11}}}, shapes);
    CHECK(as_float[0].lo == 0.2);
    CHECK(as_float[0].hi == 0.8);
    const auto as_bool = cast.output_facts(fraction, {{"to", std::int64_t{9}}}, shapes);
    CHECK(as_bool[0].lo == 1.0);
    CHECK(as_bool[0].hi == 1.0);

    const std::vector<to::spec::value_facts> ab{to::spec::value_facts::within(-1.0, 2.0), to::spec::value_facts::within(3.0, 5.0)};
    const auto mul = to::ops::find_op("Mul")->hints().output_facts(ab, {}, shapes);
    CHECK(mul[0].lo == -5.0);
    CHECK(mul[0].hi == 10.0);
    const auto sub = to::ops::find_op("Sub")->hints().output_facts(ab, {}, shapes);
    CHECK(sub[0].lo == -6.0);
    CHECK(sub[0].hi == -1.0);
    // Min keeps "some element <= m" of each input; Add does not.
    auto low = to::spec::value_facts::within(-10.0, 0.0);
    low.some_at_most = -3.0;
    const std::vector<to::spec::value_facts> with_bound{low, to::spec::value_facts::within(-1.0, 1.0)};
    CHECK(to::ops::find_op("Min")->hints().output_facts(with_bound, {}, shapes)[0].some_at_most == -3.0);
    CHECK(std::isinf(to::ops::find_op("Add")->hints().output_facts(with_bound, {}, shapes)[0].some_at_most));

    const auto u8 = to::spec::value_facts{}.of_dtype(to::dtype::u8);
    CHECK(u8.lo == 0.0);
    CHECK(u8.hi == 255.0);
    CHECK(to::spec::value_facts{}.of_dtype(to::dtype::boolean).hi == 1.0);
    CHECK(to::spec::value_facts{}.of_dtype(to::dtype::f16).is_unknown());
    // An i8 range worked out past 127 may have wrapped: only the dtype's range is kept.
    const auto wrapped = to::spec::value_facts::within(100.0, 200.0).of_dtype(to::dtype::i8);
    CHECK(wrapped.lo == -128.0);
    CHECK(wrapped.hi == 127.0);
    CHECK(to::spec::value_facts::within(1.0, 2.0).of_dtype(to::dtype::i8).lo == 1.0);
}

TEST_CASE("generator: data no free value reaches is run, and what fails on it is found") {
    const to::gen::generator gen(to::gen::config{});
    using attrs = to::spec::attribute_map;
    using ints = std::vector<std::int64_t>;
    // Ceil(Sigmoid(Softmax(x))) is 1 whatever x is (Sigmoid of [0, 1] lies in [0.5, 0.74]):
    // Sinh makes 1.18, a reverse CumSum along n such rows 1.18 ... 1.18 n, and their
    // product over 5 columns overflows float32 for n = 35 (about 1e212), not for n = 3.
    auto ones_then_product = [](std::size_t n) {
        sketch_builder b;
        const to::shape_type s{1, n, 5};
        b.input("x", s);
        auto axis = to::tensor::zeros(to::dtype::i64, to::shape_type{});
        axis.values<std::int64_t>()[0] = 1;
        b.s.model.initializers.emplace("axis", axis);
        b.s.fixed.insert("axis");
        b.s.shapes.emplace("axis", to::shape_type{});
        b.s.dtypes.emplace("axis", to::dtype::i64);
        b.node("Softmax", attrs{{"axis", std::int64_t{0}}}, {"x"}, "p", s)
            .node("Sigmoid", {}, {"p"}, "q", s)
            .node("Ceil", {}, {"q"}, "c", s)
            .node("Sinh", {}, {"c"}, "h", s)
            .node("CumSum", attrs{{"reverse", std::int64_t{1}}}, {"h", "axis"}, "k", s)
            .node("ReduceProd", attrs{{"keepdims", std::int64_t{0}}}, {"k"}, "r", {});
        return b.s;
    };
    const auto why = gen.unreachable_domain(ones_then_product(35));
    REQUIRE(why);
    CHECK(why->find("ReduceProd of data no free value reaches: output 0 is not finite") != std::string::npos);
    CHECK_FALSE(gen.unreachable_domain(ones_then_product(3)));
    // The same product of free data is not judged by running it.
    auto free_product = [](std::size_t n) {
        sketch_builder b;
        b.input("x", {1, n, 5}).node("ReduceProd", attrs{{"keepdims", std::int64_t{0}}}, {"x"}, "r", {});
        return b.s;
    };
    CHECK_FALSE(gen.unreachable_domain(free_product(35)));

    // A Conv whose stride and pads leave both outputs untouched is 0 everywhere (its
    // bias with B): a ReduceLogSum of it is log 0. One untouched output leaves room.
    auto conv_then_log_sum = [](const ints& pads, bool bias) {
        sketch_builder b;
        b.input("x", {1, 1, 4}).input("w", {1, 1, 1});
        std::vector<std::string> in{"x", "w"};
        if (bias) {
            b.input("b", {1});
            in.emplace_back("b");
        }
        const std::size_t out = static_cast<std::size_t>((4 + pads[0] + pads[1] - 1) / 20 + 1);
        b.node("Conv", attrs{{"pads", pads}, {"strides", ints{20}}}, in, "y", {1, 1, out})
            .node("ReduceLogSum", attrs{{"keepdims", std::int64_t{0}}}, {"y"}, "r", {});
        return b.s;
    };
    const auto conv = gen.unreachable_domain(conv_then_log_sum({2, 20}, false));
    REQUIRE(conv);
    CHECK(conv->find("ReduceLogSum") != std::string::npos);
    CHECK_FALSE(gen.unreachable_domain(conv_then_log_sum({0, 20}, false)));
    CHECK_FALSE(gen.unreachable_domain(conv_then_log_sum({2, 20}, true)));

    // LayerNormalization over rows of one element: the variance is 0, InvStdDev is
    // 1 / sqrt(epsilon) > 1 for every data, and Atanh of it is NaN.
    auto inv_std_dev_then_atanh = [](std::size_t row) {
        to::gen::graph_sketch sk;
        const to::shape_type x{4, row}, stats{4, 1};
        for (const auto& [name, s] : {std::pair<std::string, to::shape_type>{"x", x}, {"scale", {row}}}) {
            sk.model.inputs.push_back({name, to::dtype::f32, s});
            sk.shapes.emplace(name, s);
            sk.dtypes.emplace(name, to::dtype::f32);
        }
        auto n = make_node("LayerNormalization", {"x", "scale"}, "y", attrs{{"axis", std::int64_t{-1}}});
        n.outputs = {"y", "mean", "inv"};
        sk.model.nodes.push_back(n);
        sk.model.nodes.push_back(make_node("Atanh", {"inv"}, "a"));
        for (const auto& [name, s] : {std::pair<std::string, to::shape_type>{"y", x}, {"mean", stats}, {"inv", stats}, {"a", stats}}) {
            sk.shapes.emplace(name, s);
            sk.dtypes.emplace(name, to::dtype::f32);
        }
        return sk;
    };
    const auto inv = gen.unreachable_domain(inv_std_dev_then_atanh(1));
    REQUIRE(inv);
    CHECK(inv->find("Atanh") != std::string::npos);
    CHECK_FALSE(gen.unreachable_domain(inv_std_dev_then_atanh(3)));
}

TEST_CASE("generator: elements every data gives one value (Pad, Trilu) are followed through Slice and element-wise ops") {
    const to::gen::generator gen(to::gen::config{});
    using attrs = to::spec::attribute_map;
    // Trilu(upper) of a 4 x 4 matrix is 0 below the diagonal. A Slice of rows 2-3 and
    // columns 0-1 takes only such zeros: Log of it fails. Rows 0-1, columns 2-3 take x.
    auto log_of_trilu_slice = [&](std::vector<std::int64_t> starts, std::vector<std::int64_t> ends) {
        sketch_builder b;
        b.input("x", {4, 4});
        fixed_i64(b, "starts", std::move(starts));
        fixed_i64(b, "ends", std::move(ends));
        b.node("Trilu", attrs{{"upper", std::int64_t{1}}}, {"x"}, "t", {4, 4})
            .node("Slice", {}, {"t", "starts", "ends"}, "s", {2, 2})
            .node("Log", {}, {"s"}, "l", {2, 2});
        return b.s;
    };
    const auto trilu = gen.unreachable_domain(log_of_trilu_slice({2, 0}, {4, 2}));
    REQUIRE(trilu);
    CHECK(trilu->find("Log") != std::string::npos);
    CHECK_FALSE(gen.unreachable_domain(log_of_trilu_slice({0, 2}, {2, 4})));
    // Pad adds a row of zeros at the top (pads 1, 0, 0, 0): after a LeakyRelu (or
    // Relu) an LpNormalization along axis 1 divides that row by its norm, 0. A
    // column added on the left leaves every row some of x. Max with a free y
    // is not followed (its kernel may drop a NaN), so it is not judged.
    auto norm_of_padded = [&](std::vector<std::int64_t> pads, const std::string& between) {
        sketch_builder b;
        b.input("x", {2, 3}).input("y", {1});
        fixed_i64(b, "pads", pads);
        const to::shape_type padded{2 + static_cast<std::size_t>(pads[0] + pads[2]), 3 + static_cast<std::size_t>(pads[1] + pads[3])};
        b.node("Pad", {}, {"x", "pads"}, "p", padded);
        if (between == "Max") {
            b.node("Max", {}, {"p", "y"}, "q", padded);
        } else {
            b.node(between, {}, {"p"}, "q", padded);
        }
        b.node("LpNormalization", attrs{{"axis", std::int64_t{1}}}, {"q"}, "n", padded);
        return b.s;
    };
    for (const char* op : {"LeakyRelu", "Relu", "Identity"}) {
        CAPTURE(op);
        const auto why = gen.unreachable_domain(norm_of_padded({1, 0, 0, 0}, op));
        REQUIRE(why);
        CHECK(why->find("LpNormalization") != std::string::npos);
        CHECK(why->find("row along axis 1") != std::string::npos);
        CHECK_FALSE(gen.unreachable_domain(norm_of_padded({0, 1, 0, 0}, op)));
    }
    CHECK_FALSE(gen.unreachable_domain(norm_of_padded({1, 0, 0, 0}, "Max")));
    // Integer data: a Pad whose negative pads crop every column of x (pads 0, -3, 0, 1
    // on 2 x 3) holds its pad value 0 alone, whatever x is: the sum a ReduceLogSum of
    // its Relu takes is 0. Cropping two columns leaves one of x.
    auto log_sum_of_cropped = [&](std::vector<std::int64_t> pads) {
        sketch_builder b;
        fixed_i64(b, "pads", pads);
        const to::shape_type x{2, 3}, padded{2, 3 + static_cast<std::size_t>(pads[1] + pads[3])};
        b.s.model.inputs.push_back({"x", to::dtype::i64, x});
        b.s.model.nodes.push_back(make_node("Pad", {"x", "pads"}, "p"));
        b.s.model.nodes.push_back(make_node("Relu", {"p"}, "r"));
        b.s.model.nodes.push_back(make_node("ReduceLogSum", {"r"}, "l", attrs{{"keepdims", std::int64_t{0}}}));
        for (const auto& [v, s] : {std::pair<std::string, to::shape_type>{"x", x}, {"p", padded}, {"r", padded}, {"l", {}}}) {
            b.s.shapes.emplace(v, s);
            b.s.dtypes.emplace(v, to::dtype::i64);
        }
        return b.s;
    };
    const auto cropped = gen.unreachable_domain(log_sum_of_cropped({0, -3, 0, 1}));
    REQUIRE(cropped);
    CHECK(cropped->find("ReduceLogSum") != std::string::npos);
    CHECK_FALSE(gen.unreachable_domain(log_sum_of_cropped({0, -2, 0, 0})));
}

TEST_CASE("value facts: a float16 or bfloat16 result's bounds are rounded as its values are") {
    const to::gen::generator gen(to::gen::config{});
    using attrs = to::spec::attribute_map;
    // A LogSoftmax row of 32 holds an element <= -log 32 = -3.47, whose Erf is
    // -0.9999994: float16 and bfloat16 round it to -1 (Atanh of it is -inf), float32 does not.
    auto erf_of_log_softmax = [](to::dtype d) {
        to::gen::graph_sketch sk;
        const to::shape_type s{4, 32};
        sk.model.inputs.push_back({"x", d, s});
        sk.model.nodes.push_back(make_node("LogSoftmax", {"x"}, "l", attrs{{"axis", std::int64_t{1}}}));
        sk.model.nodes.push_back(make_node("Erf", {"l"}, "e"));
        sk.model.nodes.push_back(make_node("Atanh", {"e"}, "a"));
        for (const char* v : {"x", "l", "e", "a"}) {
            sk.shapes.emplace(v, s);
            sk.dtypes.emplace(v, d);
        }
        return sk;
    };
    for (const auto d : {to::dtype::f16, to::dtype::bf16}) {
        CAPTURE(to::name(d));
        const auto why = gen.unreachable_domain(erf_of_log_softmax(d));
        REQUIRE(why);
        CHECK(why->find("Atanh") != std::string::npos);
    }
    CHECK_FALSE(gen.unreachable_domain(erf_of_log_softmax(to::dtype::f32)));
    CHECK_FALSE(gen.unreachable_domain(erf_of_log_softmax(to::dtype::f64)));
    // The rounding itself: bounds, element bounds and forced values move to the dtype's
    // nearest value; float64 keeps them.
    auto f = to::spec::value_facts::within(0.1, 0.99999);
    f.force(0.3);
    f.some_at_most = -0.9999999;
    const auto h = f.of_dtype(to::dtype::f16);
    CHECK(h.hi == 1.0);
    CHECK(h.lo == doctest::Approx(0.1).epsilon(1e-3));
    CHECK(h.lo != 0.1);
    CHECK(h.some_at_most == -1.0);
    REQUIRE(h.forced.size() == 1);
    CHECK(h.forced[0] == to::value_cast<double>(to::value_cast<to::float16>(0.3)));
    CHECK(f.of_dtype(to::dtype::f64).hi == 0.99999);
    CHECK(std::isinf(to::spec::value_facts{}.of_dtype(to::dtype::bf16).hi));
}

TEST_CASE("generator: generated graphs keep no unreachable domain, re-drawing the ones that had one") {
    const to::gen::generator gen(to::gen::config{});
    to::gen::generation_stats stats;
    // About 2-4% of graphs draw a domain out of reach: 60 graphs, then on until one did.
    for (std::uint64_t i = 0; i < 400 && (i < 60 || stats.redrawn == 0); ++i) {
        CAPTURE(i);
        auto g = to::gen::case_rng(99, i, gen.settings().hash());
        const auto sketch = gen.generate(g, stats);
        CHECK_FALSE(gen.unreachable_domain(sketch));
    }
    CHECK(stats.redrawn > 0);
    bool named = false;
    for (const auto& [reason, n] : stats.rejected.by_reason) named = named || reason.rfind("graph re-drawn: ", 0) == 0;
    CHECK(named);
}

TEST_CASE("input search: integer divisors without zeros, and domains behind a sign change") {
    // Div of two free integer inputs: the search re-draws integers without zeros after a division by zero.
    to::gen::graph_sketch div;
    div.model.inputs = {{"a", to::dtype::i32, to::shape_type{64}}, {"b", to::dtype::i32, to::shape_type{64}}};
    to::graph::node n;
    n.op_type = "Div";
    n.inputs = {"a", "b"};
    n.outputs = {"q"};
    div.model.nodes.push_back(n);
    div.model.outputs.push_back({"q", to::dtype::i32, to::shape_type{64}});
    to::rng g(3);
    const auto r = to::gen::search_inputs(div, g);
    CHECK(r.success);
    // Acosh(Floor(1 / Softsign(x))) is finite only when every x > 0: gradients
    // push negative elements further down; positive restarts get there.
    using attrs = to::spec::attribute_map;
    const auto sign = chain({{"Softsign", attrs{}}, {"Reciprocal", attrs{}}, {"Floor", attrs{}}, {"Acosh", attrs{}}}, {26, 17});
    to::rng g2(5);
    const auto r2 = to::gen::search_inputs(sign, g2);
    CHECK(r2.success);
    CHECK(r2.restarts > 0);
    // Log(Acosh(Ceil(x))) needs every x > 1; at Ceil(x) = 1 Acosh's slope is infinite, which
    // still points the way (a non-finite gradient used to re-draw the element instead).
    const auto above_one = chain({{"Ceil", attrs{}}, {"Acosh", attrs{}}, {"Log", attrs{}}}, {64});
    to::rng g3(11);
    const auto r3 = to::gen::search_inputs(above_one, g3);
    CHECK(r3.success);
    CHECK(r3.evaluations < 50);  // re-drawing those elements took 155 evaluations and a restart here
}

TEST_CASE("input search: integer data that must be 0 beside a division that must not divide by 0") {
    // Atanh(Cast(u)) is finite only where every u is 0; Div(p, q) throws on a q of 0. The
    // divisor's data is drawn without zeros after the throw, u's still may be all zeros.
    to::gen::graph_sketch s;
    const to::shape_type sh{16};
    s.model.inputs = {{"u", to::dtype::i32, sh}, {"p", to::dtype::i32, sh}, {"q", to::dtype::i32, sh}};
    s.model.nodes = {make_node("Div", {"p", "q"}, "d"), make_node("Cast", {"u"}, "c", {{"to", std::int64_t{1}}}),
                     make_node("Atanh", {"c"}, "a")};
    s.model.outputs = {{"a", to::dtype::f32, sh}, {"d", to::dtype::i32, sh}};
    for (std::uint64_t seed = 1; seed <= 6; ++seed) {
        CAPTURE(seed);
        to::rng g(seed);
        const auto r = to::gen::search_inputs(s, g);
        REQUIRE(r.success);
        const auto u = r.values.at("u").to<double>();
        CHECK(std::all_of(u.begin(), u.end(), [](double v) { return v == 0.0; }));
        const auto q = r.values.at("q").to<double>();
        CHECK(std::none_of(q.begin(), q.end(), [](double v) { return v == 0.0; }));
    }
}

TEST_CASE("input search: a free bool weight that must be all false or all true") {
    // No gradient moves a bool: Atanh(Cast(mask)) is finite only when no element is true,
    // Log(Cast(mask)) only when every element is; restarts take turns over both.
    for (const char* op : {"Atanh", "Log"}) {
        CAPTURE(op);
        to::gen::graph_sketch s;
        s.model.initializers.emplace("mask", to::tensor::zeros(to::dtype::boolean, to::shape_type{46}));
        to::graph::node cast;
        cast.op_type = "Cast";
        cast.inputs = {"mask"};
        cast.outputs = {"m"};
        cast.attributes["to"] = std::int64_t{1};
        to::graph::node f;
        f.op_type = op;
        f.inputs = {"m"};
        f.outputs = {"y"};
        s.model.nodes = {cast, f};
        s.model.outputs.push_back({"y", to::dtype::f32, to::shape_type{46}});
        to::rng g(19);
        const auto r = to::gen::search_inputs(s, g);
        REQUIRE(r.success);
        const auto mask = r.values.at("mask").to<double>();
        const double want = std::string_view(op) == "Atanh" ? 0.0 : 1.0;
        CHECK(std::all_of(mask.begin(), mask.end(), [&](double v) { return v == want; }));
    }
}

TEST_CASE("Cast's domain: a floating value fits an integer target when its truncation does") {
    auto loss = [](std::int64_t to_code, double x, to::dtype from) {
        const auto rules = to::ops::find_op("Cast")->domain({{"to", to_code}});
        REQUIRE(rules.size() == 1);
        const std::vector<to::tensor> in{to::tensor(to::array<double>{x}).cast(from)};
        return rules[0].loss(in);
    };
    constexpr std::int64_t u8 = 2, i8 = 3, i32 = 6;
    CHECK(loss(u8, -0.5, to::dtype::f32) == 0.0);  // truncates to 0
    CHECK(loss(u8, 255.75, to::dtype::f32) == 0.0);
    CHECK(loss(u8, -1.0, to::dtype::f32) > 0.0);
    CHECK(loss(u8, 256.0, to::dtype::f32) > 0.0);
    CHECK(loss(i8, -128.75, to::dtype::f64) == 0.0);
    CHECK(loss(i8, -129.0, to::dtype::f64) > 0.0);
    CHECK(loss(i8, 128.0, to::dtype::f16) > 0.0);
    CHECK(loss(i32, 2147483647.5, to::dtype::f64) == 0.0);
    CHECK(loss(i32, 2147483648.0, to::dtype::f64) > 0.0);
    CHECK(loss(i32, -2147483649.0, to::dtype::f64) > 0.0);
    // The kernel agrees: the values inside the range convert to the truncated integer.
    const auto cast = to::tensor(to::array<double>{-0.5, 255.75, -128.75}).cast(to::dtype::u8);
    CHECK(cast.to<double>()(0) == 0.0);
    CHECK(cast.to<double>()(1) == 255.0);
}


TEST_CASE("input search: a domain only an exact zero reaches") {
    // Atanh(Selu(Sign(y / x))): Sign gives -1, 0 or 1, and Selu of +-1 leaves (-1, 1), so
    // every element needs y / x = 0 exactly: y = 0 with x != 0. No gradient step lands
    // on 0; the starts that set some free values to zeros do.
    to::gen::graph_sketch s;
    s.model.inputs = {{"y", to::dtype::f64, to::shape_type{}}, {"x", to::dtype::f64, to::shape_type{5}}};
    s.model.nodes = {make_node("Div", {"y", "x"}, "q"), make_node("Sign", {"q"}, "s"), make_node("Selu", {"s"}, "u"),
                     make_node("Atanh", {"u"}, "a")};
    s.model.outputs.push_back({"a", to::dtype::f64, to::shape_type{5}});
    for (const std::uint64_t seed : {1, 2, 3}) {
        CAPTURE(seed);
        to::rng g(seed);
        const auto r = to::gen::search_inputs(s, g);
        REQUIRE(r.success);
        CHECK(r.restarts > 0);
        CHECK(r.values.at("y").to<double>()() == 0.0);
        const auto x = r.values.at("x").to<double>();
        CHECK(std::all_of(x.begin(), x.end(), [](double v) { return v != 0.0; }));
    }
}

TEST_CASE("input search: a product of 64,000 bfloat16 elements, finite and non-zero") {
    // Reciprocal(ReduceProd(x)) over 250 x 256 bfloat16 elements: the product is finite and
    // non-zero only where sum(log |x|) lies within about +-88, every element near 1. Draws
    // land far from that and a gradient step moves each element by about lr; the starts
    // that set some free values to all ones reach it at once.
    to::gen::graph_sketch s;
    const to::shape_type shape{250, 256};
    s.model.inputs = {{"x", to::dtype::bf16, shape}};
    s.model.nodes = {make_node("ReduceProd", {"x"}, "p", to::spec::attribute_map{{"keepdims", std::int64_t{0}}}),
                     make_node("Reciprocal", {"p"}, "r")};
    s.model.outputs.push_back({"r", to::dtype::bf16, to::shape_type{}});
    for (const std::uint64_t seed : {1, 2, 3}) {
        CAPTURE(seed);
        to::rng g(seed);
        const auto r = to::gen::search_inputs(s, g);
        REQUIRE(r.success);
        const double p = r.run.at("p").to<double>()();
        CHECK(std::isfinite(p));
        CHECK(p != 0.0);
    }
}

TEST_CASE("ReduceProd's finiteness rule: the excess of sum(log |x|) per group, slope 1 / x") {
    const auto rules = to::ops::find_op("ReduceProd")->domain({{"axes", std::vector<std::int64_t>{1}}});
    REQUIRE(!rules.empty());
    // Three rows of 40: a row of 10s overflows float16 (log 10^40 = 92.1 > log 65504 = 11.09),
    // a row of 10s with one zero does not, and a row of 1.1s does not (40 log 1.1 = 3.8).
    auto x = to::array<double>::from_shape({3, 40});
    for (std::size_t j = 0; j < 40; ++j) {
        x(0, j) = j % 2 == 0 ? 10.0 : -10.0;
        x(1, j) = j == 7 ? 0.0 : 10.0;
        x(2, j) = 1.1;
    }
    const std::vector<to::tensor> in{to::tensor(x).cast(to::dtype::f16)};
    const double excess = 40.0 * std::log(10.0) - std::log(65504.0);
    CHECK(rules[0].loss(in) == doctest::Approx(excess).epsilon(1e-3));
    REQUIRE(rules[0].gradient);
    const auto d = rules[0].gradient(in)[0].to<double>();
    for (std::size_t j = 0; j < 40; ++j) {
        CHECK(d(0, j) == doctest::Approx(j % 2 == 0 ? 0.1 : -0.1));
        CHECK(d(1, j) == 0.0);
        CHECK(d(2, j) == 0.0);
    }
    // float32's largest value has log 88.7: the row of 10s still overflows it, by less.
    const std::vector<to::tensor> f32{to::tensor(x).cast(to::dtype::f32)};
    CHECK(rules[0].loss(f32) == doctest::Approx(40.0 * std::log(10.0) - std::log(3.4028234663852886e38)).epsilon(1e-3));
    // Integers wrap: always finite.
    const std::vector<to::tensor> ints{to::tensor(x).cast(to::dtype::i32)};
    CHECK(rules[0].loss(ints) == 0.0);
}

TEST_CASE("input search: a product of thousands of LogSoftmax values, brought into range through its log") {
    // LogSoftmax over 3 logits has an element of magnitude >= log 3 in every row, so small
    // data does not help (rows of equal logits give (log 3)^3000, past float32's range):
    // the rule's slope 1 / x makes one logit per row dominate.
    to::gen::graph_sketch s;
    s.model.inputs = {{"x", to::dtype::f32, to::shape_type{1000, 3}}};
    s.model.nodes = {make_node("LogSoftmax", {"x"}, "l", {{"axis", std::int64_t{1}}}),
                     make_node("ReduceProd", {"l"}, "p", {{"keepdims", std::int64_t{0}}})};
    s.model.outputs.push_back({"p", to::dtype::f32, to::shape_type{}});
    to::rng g(7);
    const auto r = to::gen::search_inputs(s, g);
    REQUIRE(r.success);
    CHECK(std::isfinite(r.run.at("p").to<double>()()));
    CHECK(r.gradient_steps > 0);
}

TEST_CASE("input search: the work budget counts the taps an op's kernel visits and ends a costly search") {
    // Log(Neg(Exp(Conv(x, W)))) has no finite data: only a budget ends the search. The Conv's
    // work (138,240 steps per run: 115,200 multiply-adds and 23,040 bounds tests of kernel
    // rows; three times that per VJP) dominates its element count (about 3,000), so a budget
    // of 10^6 units allows two or three evaluations.
    to::gen::graph_sketch s;
    s.model.inputs = {{"x", to::dtype::f32, to::shape_type{1, 4, 16, 16}}};
    s.model.initializers.emplace("W", to::tensor::zeros(to::dtype::f32, to::shape_type{8, 4, 5, 5}));
    auto node = [](std::string op, std::vector<std::string> in, std::string out) {
        to::graph::node n;
        n.op_type = std::move(op);
        n.inputs = std::move(in);
        n.outputs = {std::move(out)};
        return n;
    };
    s.model.nodes = {node("Conv", {"x", "W"}, "c"), node("Exp", {"c"}, "e"), node("Neg", {"e"}, "n"), node("Log", {"n"}, "y")};
    s.model.outputs.push_back({"y", to::dtype::f32, to::shape_type{1, 8, 12, 12}});
    auto search = [&](double work_budget, std::size_t iterations) {
        to::gen::search_options o;
        o.work_budget = work_budget;
        o.iterations = iterations;
        to::rng g(23);
        return to::gen::search_inputs(s, g, o);
    };
    const auto r = search(1e6, 256);
    CHECK_FALSE(r.success);
    CHECK(r.out_of_work);
    CHECK(r.work >= 1e6);
    CHECK(r.evaluations >= 2);
    CHECK(r.evaluations <= 3);
    // The iteration limit ends it first when the budget is ample, and says so.
    const auto r2 = search(to::gen::search_options{}.work_budget, 6);
    CHECK_FALSE(r2.success);
    CHECK_FALSE(r2.out_of_work);
    CHECK(r2.evaluations == 6);
    // A window mostly in the padding costs the taps the kernel visits (hints().visits), not the
    // kernel's size per output: 15x15 windows padded by 14 over a 16x16 plane reach 240 in-bounds
    // taps per axis over their 30 starts, 57,600 in all plus 900 windows, where the work estimate
    // (900 outputs times 225 taps) says 202,500.
    auto pool = node("AveragePool", {"x"}, "p");
    pool.attributes = {{"kernel_shape", std::vector<std::int64_t>{15, 15}}, {"pads", std::vector<std::int64_t>{14, 14, 14, 14}}};
    std::map<std::string, to::tensor, std::less<>> values{{"x", to::tensor::zeros(to::dtype::f32, to::shape_type{1, 1, 16, 16})}};
    const auto call = to::ad::detail::prepare(pool, values);
    const auto out = to::spec::evaluate(*call.op, call.args, call.attributes);
    REQUIRE(out[0].shape() == to::shape_type{1, 1, 30, 30});
    CHECK(to::gen::detail::node_work(call, out) == 57600.0 + 900.0);
}

TEST_CASE("input search: a start that spends its share of the work budget gives way to the next start kind") {
    // Cosh(Conv(w, k)) in float16 (graph 397 of the benchmark's seed 12): 520-tap sums of
    // draws overflow Cosh, and the gradient shrinks them slowly enough that the first
    // start never stalls; it spent the whole budget. The next start kind (all zeros) is
    // finite at once.
    to::gen::graph_sketch s;
    s.model.inputs = {{"w", to::dtype::f16, to::shape_type{4, 1, 50, 7, 44}}, {"k", to::dtype::f16, to::shape_type{2, 1, 13, 1, 40}}};
    s.model.nodes = {make_node("Conv", {"w", "k"}, "c",
                               {{"dilations", std::vector<std::int64_t>{3, 32, 1}}, {"strides", std::vector<std::int64_t>{3, 1, 1}}}),
                     make_node("Cosh", {"c"}, "y")};
    s.model.outputs.push_back({"y", to::dtype::f16, to::shape_type{4, 2, 5, 7, 5}});
    auto search = [&](double share) {
        to::gen::search_options o;
        o.work_budget = 4e7;  // about 14 evaluations of this graph
        o.work_share_per_start = share;
        to::rng g(1);
        return to::gen::search_inputs(s, g, o);
    };
    const auto whole = search(1.0);  // a start may spend it all: what the search did before
    CHECK_FALSE(whole.success);
    CHECK(whole.out_of_work);
    CHECK(whole.gradient_steps > 10);
    const auto shared = search(to::gen::search_options{}.work_share_per_start);
    CHECK(shared.success);
    CHECK(shared.restarts >= 1);
    CHECK(shared.work < 0.5 * 4e7);
}

TEST_CASE("input search: options that would take no step or never end a start are errors naming the setting") {
    using attrs = to::spec::attribute_map;
    const auto s = chain({{"Log", attrs{}}}, {8});
    auto search = [&](const to::gen::search_options& o) {
        to::rng g(1);
        return to::gen::search_inputs(s, g, o);
    };
    for (const double bad : {0.0, -0.5, 1.5, std::nan("")}) {
        CAPTURE(bad);
        to::gen::search_options o;
        o.work_share_per_start = bad;
        CHECK_THROWS_WITH_AS((void)search(o), doctest::Contains("work_share_per_start must lie in (0, 1]"), to::error);
    }
    for (const double bad : {0.0, -1.0, std::numeric_limits<double>::infinity(), std::nan("")}) {
        CAPTURE(bad);
        to::gen::search_options o;
        o.learning_rate = bad;
        CHECK_THROWS_WITH_AS((void)search(o), doctest::Contains("learning_rate must be finite and positive, got"), to::error);
    }
    to::gen::search_options o;
    o.work_budget = -1.0;
    CHECK_THROWS_WITH_AS((void)search(o), doctest::Contains("work_budget must be positive, got -1"), to::error);
    o.work_budget = 1e6;  // the same options in range: a search runs
    CHECK(search(o).evaluations >= 1);
}

TEST_CASE("input search: its finiteness check and dtype conversion agree with the widened reference") {
    // detail::all_finite reads each dtype's own elements and detail::to_dtype
    // converts in one pass; both must say what the widened copy and
    // tensor::cast say, on every dtype, NaN, infinities, overflow and ties.
    const double inf = std::numeric_limits<double>::infinity();
    const std::vector<double> base{0.0, -0.0, 1.5, -2.25, 65504.0, 65520.0, 1e-8, -3.4e38, 1e300, 0.1};
    auto agree = [](const std::vector<double>& values, to::dtype d) {
        to::array<double> a = to::array<double>::from_shape({values.size()});
        std::copy(values.begin(), values.end(), a.begin());
        const auto fast = to::gen::detail::to_dtype(a, d);
        const auto reference = to::tensor(a).cast(d);
        CHECK(fast.identical(reference));
        CHECK(to::gen::detail::all_finite(fast) == all_finite(reference));
    };
    for (const auto d : {to::dtype::f16, to::dtype::bf16, to::dtype::f32, to::dtype::f64}) {
        CAPTURE(to::name(d));
        for (const double extra : {1.0, inf, -inf, std::numeric_limits<double>::quiet_NaN()}) {
            auto values = base;
            values.push_back(extra);
            agree(values, d);
        }
    }
    // Integers and bool: values in range of every integer dtype (an integer cast of NaN is not defined).
    for (const auto d : {to::dtype::i8, to::dtype::i32, to::dtype::u8, to::dtype::i64, to::dtype::boolean}) {
        CAPTURE(to::name(d));
        agree({0.0, 1.0, 2.0, 7.0, 100.0}, d);
    }
    // A finite first part does not hide a later non-finite element, in a narrow type too.
    to::array<double> a = to::array<double>::from_shape({3, 4});
    a.fill(1.0);
    a(2, 3) = 70000.0;  // overflows float16 only
    CHECK_FALSE(to::gen::detail::all_finite(to::gen::detail::to_dtype(a, to::dtype::f16)));
    CHECK(to::gen::detail::all_finite(to::gen::detail::to_dtype(a, to::dtype::bf16)));
    CHECK(to::gen::detail::all_finite(to::gen::detail::to_dtype(a, to::dtype::f32)));
    // Long enough for the blocked loops: a non-finite element in the first block,
    // at a block's edge, in a later block and in the tail.
    for (const auto d : {to::dtype::f16, to::dtype::bf16, to::dtype::f32, to::dtype::f64}) {
        CAPTURE(to::name(d));
        to::array<double> b = to::array<double>::from_shape({100});
        b.fill(0.5);
        CHECK(to::gen::detail::all_finite(to::gen::detail::to_dtype(b, d)));
        for (const std::size_t at : {0u, 31u, 32u, 70u, 99u}) {
            CAPTURE(at);
            for (const double bad : {inf, -inf, std::numeric_limits<double>::quiet_NaN()}) {
                b(at) = bad;
                CHECK_FALSE(to::gen::detail::all_finite(to::gen::detail::to_dtype(b, d)));
            }
            b(at) = 0.5;
        }
    }
}

TEST_CASE("generator: no Squeeze with an empty axes list (ONNX leaves its meaning open)") {
    // Backward insertion nudges a list's length towards the bound output's rank; for
    // Squeeze that reached an empty axes list, which ONNX's reference reads as "remove
    // nothing" and onnxruntime as "remove every dim of 1" (docs/FINDINGS.md).
    to::gen::config cfg;
    cfg.include_ops = {"Squeeze", "Unsqueeze", "Relu", "Add"};
    cfg.max_nodes = 6;
    const to::gen::generator gen(cfg);
    to::gen::generation_stats stats;
    std::size_t squeezes = 0, with_axes = 0;
    for (std::uint64_t i = 0; i < 200; ++i) {
        auto g = to::gen::case_rng(11, i, gen.settings().hash());
        const auto sketch = gen.generate(g, stats);
        for (const auto& n : sketch.model.nodes) {
            if (n.op_type != "Squeeze") continue;
            ++squeezes;
            if (n.inputs.size() < 2 || n.inputs[1].empty()) continue;
            ++with_axes;
            const auto it = sketch.model.initializers.find(n.inputs[1]);
            REQUIRE(it != sketch.model.initializers.end());
            CHECK_MESSAGE(it->second.size() > 0, "case ", i, ": Squeeze ", n.outputs[0], " has an empty axes list:\n", tensoracle::io::model_text(sketch.model));
        }
    }
    CHECK(squeezes > 50);
    CHECK(with_axes > 20);
}

}  // namespace gen_generator_test
