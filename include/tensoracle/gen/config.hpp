// tensoracle: what the graph generator may produce. Plain data, so a
// campaign stores it as JSON (gen/config_json.hpp) and any case is
// regenerated from (seed, index, config); `hash()` identifies a config.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <boost/hana/accessors.hpp>
#include <boost/hana/adapt_struct.hpp>
#include <boost/hana/length.hpp>

#include "tensoracle/core/dtype.hpp"
#include "tensoracle/core/hash.hpp"
#include "tensoracle/core/error.hpp"
#include "tensoracle/gen/motifs.hpp"

namespace tensoracle::gen {

/// The input search's default budget in work units (config::search_work,
/// search_options::work_budget): about a second on the 2-core machine of the README's figures.
inline constexpr std::size_t default_search_work = std::size_t{1} << 27;

struct config {
    /// Ops to draw from (empty: every op of the registry) and ops never drawn.
    std::vector<std::string> include_ops;
    std::vector<std::string> exclude_ops;
    /// Element types values may have.
    std::vector<dtype> dtypes{dtype::f16, dtype::bf16, dtype::f32, dtype::f64, dtype::i8, dtype::i16,
                              dtype::i32, dtype::i64,  dtype::u8,   dtype::boolean};
    std::size_t min_rank = 0;
    std::size_t max_rank = 5;
    std::size_t max_nodes = 10;
    std::size_t max_elements = 65536;  ///< per tensor
    /// Per node: an op's work estimate (spec::hints::work, multiply-adds) stays below this.
    std::size_t max_work = std::size_t{1} << 24;
    std::int64_t min_dim = 1;
    std::int64_t max_dim = 64;  ///< placeholder (input) dims; outputs are bounded by max_elements
    /// Ops with a numeric domain (Log, Sqrt, Div, Pow, ...): the input search keeps their inputs inside it.
    bool vulnerable_ops = true;
    /// Probability that an insertion is forward (consumes existing values) rather than backward.
    double forward_probability = 0.5;
    /// One graph input and one graph output (forward insertion only; extra inputs become weights).
    bool single_io = false;
    /// Probability that a floating placeholder becomes an initializer (a weight) rather than a graph input.
    double initializer_probability = 0.3;
    /// Probability that a placeholder an op reads as a weight (spec::hints::weight_inputs:
    /// Conv's W and B, normalization parameters, Clip's bounds ...) becomes an initializer.
    /// Compilers fold and fuse around constants, so the default makes them constants.
    double weight_probability = 1.0;
    /// Probability that an insertion splices a motif (gen/motifs.hpp: a pattern a
    /// compiler rewrites, or a near miss of one) instead of one op. Off here, so
    /// the C++ API's graphs stay as they were; the command line turns it on.
    double motif_probability = 0.0;
    /// Probability that a motif instance is varied one way (motif_variant).
    double motif_near_miss = 0.3;
    /// The built-in library (builtin_motifs) is drawn from; user_motifs always are.
    bool builtin_motifs = true;
    /// Motif name -> weight, overriding the motif's own (0: never drawn).
    std::map<std::string, double> motif_weights;
    /// A compiler team's own patterns, drawn beside the built-in ones.
    std::vector<motif> user_motifs;
    /// Attribute binning (NNSmith's Algorithm 2) with this many exponential bins.
    bool binning = true;
    int bins = 7;
    /// The model's opset; ops whose spec is not the current version at it are not drawn.
    int opset = 17;
    /// What the target accepts: op_type -> dtypes of the op's first input (absent op: anything).
    std::map<std::string, std::set<dtype>> support;
    /// Leave out the few valid configurations whose shape ONNX 1.12 (Debian 12's libonnx)
    /// infers wrongly (io/onnx_known_issues.hpp), so every graph passes its strict shape
    /// inference. Off: those configurations too (ceil_mode windows that start in the
    /// padding, ConvTranspose crops and SAME with output_padding), for newer runtimes.
    bool avoid_onnx_shape_inference_bugs = true;
    /// Input search budget (iterations of Algorithm 3).
    std::size_t search_iterations = 256;
    /// Input search budget in work units (about one multiply-add of a node's forward
    /// kernel, three per unit through its VJP; gen::search_options::work_budget): a
    /// graph whose search would cost more (a large Conv that needs many steps) is
    /// grown again. Deterministic, unlike a time limit. About a second here.
    std::size_t search_work = default_search_work;
    /// A case whose input search fails is grown again from its own random stream, up to
    /// this many graphs in all, so what a campaign receives is NaN/Inf-free; 1: keep the
    /// first graph whatever the search found.
    std::size_t search_attempts = 8;

    /// A canonical text form: equal configs give equal text. Written out by
    /// hand, not from the member list below: it is hashed into every case's
    /// random stream (case_rng), so its text is frozen; a member added later
    /// is written only when set otherwise (as weights= and motifs= are), so
    /// that existing configs keep their hash and their cases.
    [[nodiscard]] std::string canonical() const {
        std::ostringstream os;
        auto list = [&](const char* key, std::vector<std::string> v) {
            std::sort(v.begin(), v.end());
            os << key << '=';
            for (const auto& s : v) os << s << ',';
            os << ';';
        };
        list("include", include_ops);
        list("exclude", exclude_ops);
        std::vector<std::string> dt;
        for (const auto d : dtypes) dt.emplace_back(name(d));
        list("dtypes", dt);
        os << "rank=" << min_rank << ".." << max_rank << ";nodes=" << max_nodes << ";elements=" << max_elements << ";work=" << max_work
           << ";dims=" << min_dim << ".." << max_dim << ";vulnerable=" << vulnerable_ops
           << ";forward=" << forward_probability << ";single_io=" << single_io
           << ";initializers=" << initializer_probability << ";binning=" << binning << ";bins=" << bins
           << ";opset=" << opset << ";avoid_onnx_bugs=" << avoid_onnx_shape_inference_bugs << ";search=" << search_iterations << ";search_work=" << search_work << ";attempts=" << search_attempts << ";support=";
        for (const auto& [op, ds] : support) {
            os << op << ':';
            std::vector<std::string> names;
            for (const auto d : ds) names.emplace_back(name(d));
            std::sort(names.begin(), names.end());
            for (const auto& n : names) os << n << ',';
            os << '|';
        }
        // Written only when set otherwise, so configs that leave it alone keep their
        // hash, and with it every case's random stream (case_rng).
        if (weight_probability != 1.0) os << ";weights=" << weight_probability;
        if (motif_probability > 0.0) {
            os << ";motifs=" << motif_probability << ",near_miss=" << motif_near_miss << ",builtin=" << builtin_motifs << ",weights=";
            for (const auto& [n, w] : motif_weights) os << n << ':' << w << ',';
            for (const auto& m : user_motifs) os << m.canonical();
        }
        return os.str();
    }
    /// FNV-1a of the canonical form, as 16 hex digits.
    [[nodiscard]] std::string hash() const { return fnv1a_hex(canonical()); }

    /// Throws naming the first setting that cannot work.
    void validate() const {
        const char* where = "tensoracle::gen::config";
        if (dtypes.empty()) throw error(where, "dtypes is empty: no value could have a type");
        if (min_rank > max_rank) {
            throw error(where, "min_rank " + std::to_string(min_rank) + " > max_rank " + std::to_string(max_rank));
        }
        if (max_rank > 8) throw error(where, "max_rank " + std::to_string(max_rank) + " exceeds 8");
        if (min_dim < 1 || min_dim > max_dim) {
            throw error(where, "dims range [" + std::to_string(min_dim) + ", " + std::to_string(max_dim) +
                                   "] is empty or below 1");
        }
        if (max_elements < 1) throw error(where, "max_elements must be at least 1");
        if (max_work < 1) throw error(where, "max_work must be at least 1");
        if (max_nodes < 1) throw error(where, "max_nodes must be at least 1");
        if (bins < 1 || bins > 30) throw error(where, "bins must be in [1, 30], got " + std::to_string(bins));
        if (!(forward_probability >= 0.0 && forward_probability <= 1.0)) {
            throw error(where, "forward_probability must be in [0, 1]");
        }
        if (!(initializer_probability >= 0.0 && initializer_probability <= 1.0)) {
            throw error(where, "initializer_probability must be in [0, 1]");
        }
        if (!(weight_probability >= 0.0 && weight_probability <= 1.0)) {
            throw error(where, "weight_probability must be in [0, 1]");
        }
        if (opset < 1) throw error(where, "opset must be positive");
        if (!(motif_probability >= 0.0 && motif_probability <= 1.0)) throw error(where, "motif_probability must be in [0, 1]");
        if (!(motif_near_miss >= 0.0 && motif_near_miss <= 1.0)) throw error(where, "motif_near_miss must be in [0, 1]");
        for (const auto& [n, w] : motif_weights) {
            if (!(w >= 0.0)) throw error(where, "motif_weights: '" + n + "' has a negative weight");
        }
        for (const auto& m : user_motifs) m.validate(where);
        if (search_attempts < 1) throw error(where, "search_attempts must be at least 1");
        if (search_work < 1) throw error(where, "search_work must be at least 1");
    }
};

namespace detail {
/// Converts to any member type: counts an aggregate's members (T{m, m, ...}).
struct any_member {
    template <class U>
    operator U() const;  // never defined: used in unevaluated requires-expressions only
};
template <class T, class... M>
constexpr std::size_t aggregate_member_count() {
    if constexpr (requires { T{M{}..., any_member{}}; }) {
        return aggregate_member_count<T, M..., any_member>();
    } else {
        return sizeof...(M);
    }
}
}  // namespace detail

}  // namespace tensoracle::gen

// The one list of gen::config's members, with their names: the JSON form
// (gen/config_json.hpp: to_json, config_from_json) walks it, so a member is a
// JSON key as soon as it is listed here. A member added to the struct but not
// here fails the static_assert below.
BOOST_HANA_ADAPT_STRUCT(tensoracle::gen::config, include_ops, exclude_ops, dtypes, min_rank, max_rank, max_nodes, max_elements, max_work, min_dim, max_dim, vulnerable_ops, forward_probability, single_io, initializer_probability, weight_probability, motif_probability, motif_near_miss, builtin_motifs, motif_weights, user_motifs, binning, bins, opset, support, avoid_onnx_shape_inference_bugs, search_iterations, search_work, search_attempts);

static_assert(tensoracle::gen::detail::aggregate_member_count<tensoracle::gen::config>() ==
                  decltype(boost::hana::length(boost::hana::accessors<tensoracle::gen::config>()))::value,
              "tensoracle::gen::config: every member must be listed in BOOST_HANA_ADAPT_STRUCT(tensoracle::gen::config, ...) "
              "in gen/config.hpp, so that its JSON form has it");
