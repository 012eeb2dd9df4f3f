// Triage: confirmed findings read from finding folders and JSON files (errors
// named), signatures labelled new / known / limitation, and the summary listing
// new wrong results first, known ones after, limitations collapsed at the end.
#include <doctest/doctest.h>

#include <tensoracle/campaign/campaign.hpp>
#include <tensoracle/campaign/triage.hpp>

#include <filesystem>
#include <fstream>

#include <unistd.h>

// One namespace per file: test executables compile as one unity file (tests/CMakeLists.txt).
namespace campaign_triage_test {

namespace tc = tensoracle::campaign;
namespace fs = std::filesystem;

namespace {
fs::path scratch(const std::string& name) {
    const auto d = fs::temp_directory_path() / ("tensoracle_triage_" + name + "_" + std::to_string(::getpid()));
    fs::remove_all(d);
    fs::create_directories(d);
    return d;
}
}  // namespace

TEST_CASE("triage: known findings from finding folders and JSON files, and what cannot be read is named") {
    const auto d = scratch("known");
    fs::create_directories(d / "findings" / "ort_bug" );
    std::ofstream(d / "findings" / "ort_bug" / "expected.json") << R"({"onnxruntime": "mismatch", "signature": "aaaa000000000001"})";
    fs::create_directories(d / "findings" / "no_signature");
    std::ofstream(d / "findings" / "no_signature" / "expected.json") << R"({"onnxruntime": "mismatch"})";
    tc::known_findings k;
    k.add(d);  // a folder of folders of findings
    CHECK(k.by_signature.size() == 1);
    CHECK(k.by_signature.at("aaaa000000000001") == "ort_bug");
    std::ofstream(d / "mine.json") << R"({"bbbb000000000002": "my compiler's bug"})";
    k.add(d / "mine.json");
    std::ofstream(d / "list.json") << R"([{"signature": "cccc000000000003", "name": "listed"}, {"signature": "dddd000000000004"}])";
    k.add(d / "list.json");
    CHECK(k.by_signature.size() == 4);
    CHECK(k.by_signature.at("dddd000000000004") == "dddd000000000004");
    // Verdicts: precision and specification gaps are judged no fault; bugs and limitations confirmed.
    std::ofstream(d / "judged.json") << R"([{"signature": "ffff000000000006", "name": "f16 islands", "verdict": "precision"},
        {"signature": "ffff000000000007", "name": "Squeeze axes=[]", "verdict": "specification gap"},
        {"signature": "ffff000000000008", "name": "a bug", "verdict": "bug"}])";
    k.add(d / "judged.json");
    CHECK(k.judged_not_a_bug("ffff000000000006"));
    CHECK(k.judged_not_a_bug("ffff000000000007"));
    CHECK_FALSE(k.judged_not_a_bug("ffff000000000008"));
    CHECK_FALSE(k.judged_not_a_bug("aaaa000000000001"));
    CHECK(tc::triage_label({{"id", "ffff000000000006"}, {"outcome", "mismatch"}}, k) == "judged");
    CHECK(tc::triage_label({{"id", "ffff000000000008"}, {"outcome", "mismatch"}}, k) == "known");
    std::ofstream(d / "verdict.json") << R"([{"signature": "ffff000000000009", "verdict": "theirs"}])";
    CHECK_THROWS_WITH_AS(k.add(d / "verdict.json"), doctest::Contains("signature ffff000000000009: unknown verdict 'theirs'"), tensoracle::error);

    CHECK_THROWS_WITH_AS(k.add(d / "absent.json"), doctest::Contains("cannot open"), tensoracle::error);
    fs::create_directories(d / "empty");
    CHECK_THROWS_WITH_AS(k.add(d / "empty"), doctest::Contains("no finding folder"), tensoracle::error);
    std::ofstream(d / "bad.json") << "{not json";
    CHECK_THROWS_WITH_AS(k.add(d / "bad.json"), doctest::Contains("is not JSON"), tensoracle::error);
    std::ofstream(d / "num.json") << R"({"eeee": 5})";
    CHECK_THROWS_WITH_AS(k.add(d / "num.json"), doctest::Contains("signature eeee is not a name"), tensoracle::error);
    fs::remove_all(d);
#ifdef TENSORACLE_SOURCE_DIR
    // The kit's own confirmed findings.
    tc::known_findings kit;
    kit.add(fs::path(TENSORACLE_SOURCE_DIR) / "tests" / "data");
    CHECK(kit.by_signature.size() >= 10);
    bool erf = false;  // a finding folder with a signature
    for (const auto& [id, name] : kit.by_signature) erf = erf || name == "opencv_add_broadcast_two_inputs";
    CHECK(erf);
#endif
}

TEST_CASE("triage: the summary lists new wrong results, then other new failures, known ones, limitations collapsed") {
    const auto d = scratch("summary");
    auto sig = [](const std::string& id, const std::string& backend, const std::string& outcome) {
        return nlohmann::json{{"id", id}, {"backend", backend}, {"outcome", outcome}, {"oracle", "reference"}, {"where", "Add f32"}};
    };
    {
        std::ofstream r(d / "results.jsonl");
        // Refusals are the most frequent, a known mismatch next, then a crash and a new mismatch.
        for (int i = 0; i < 6; ++i) {
            nlohmann::json line{{"case", "s1_c" + std::to_string(i)}, {"index", i}, {"nodes", 3},
                                {"backends", {{"sut", {{"outcome", "compile_failure"}}}}},
                                {"signatures", nlohmann::json::array({sig("1111111111111111", "sut", "compile_failure")})}};
            if (i < 4) line["signatures"].push_back(sig("2222222222222222", "sut", "mismatch"));
            if (i < 2) line["signatures"].push_back(sig("3333333333333333", "sut", "crash"));
            if (i < 1) line["signatures"].push_back(sig("4444444444444444", "sut", "mismatch"));
            if (i < 3) line["signatures"].push_back(sig("5555555555555555", "sut", "mismatch"));
            r << line.dump() << '\n';
        }
    }
    tc::summary_scope sc;
    sc.dir = d;
    sc.backends = {"sut"};
    sc.includes = [](std::uint64_t) { return true; };
    sc.requested = 6;
    sc.known.by_signature.emplace("2222222222222222", "sut_known_mismatch");
    sc.known.by_signature.emplace("5555555555555555", "sut_precision");
    sc.known.verdict_by_signature.emplace("5555555555555555", "precision");
    const auto s = tc::write_summary(sc);
    REQUIRE(s["signatures"].size() == 5);
    CHECK(s["signatures"][0]["id"] == "4444444444444444");  // new wrong result, despite its one case
    CHECK(s["signatures"][0]["triage"] == "new");
    CHECK(s["signatures"][1]["id"] == "3333333333333333");  // new crash
    CHECK(s["signatures"][2]["id"] == "2222222222222222");
    CHECK(s["signatures"][2]["triage"] == "known");
    CHECK(s["signatures"][2]["finding"] == "sut_known_mismatch");
    CHECK(s["signatures"][3]["id"] == "5555555555555555");  // judged after known, though more frequent
    CHECK(s["signatures"][3]["triage"] == "judged");
    CHECK(s["signatures"][3]["finding"] == "sut_precision");
    CHECK(s["signatures"][4]["triage"] == "limitation");
    CHECK(s["triage"]["new"] == 2);
    CHECK(s["triage"]["judged"] == 1);
    std::ifstream t(d / "summary.txt");
    const std::string text((std::istreambuf_iterator<char>(t)), std::istreambuf_iterator<char>());
    const auto first_new = text.find("NEW    4444444444444444"), crash = text.find("NEW    3333333333333333");
    const auto known = text.find("known  2222222222222222"), judged = text.find("judged 5555555555555555");
    const auto limitation = text.find("limitations (signatures collapsed, cases):  sut compile_failure 6");
    CHECK(text.find("5 (2 new, 1 known, 1 judged not bugs, 1 limitations") != std::string::npos);
    CHECK(first_new != std::string::npos);
    CHECK(crash > first_new);
    CHECK(known > crash);
    CHECK(judged > known);
    CHECK(limitation > judged);
    CHECK(limitation != std::string::npos);
    CHECK(text.find("1111111111111111") == std::string::npos);  // collapsed
    fs::remove_all(d);
}

TEST_CASE("triage: a load failure another configuration of the system runs is new, not a limitation") {
    const tc::known_findings none;
    CHECK(tc::triage_label({{"id", "a"}, {"outcome", "compile_failure"}, {"where", "Type Error: bfloat# not supported"}}, none) == "limitation");
    CHECK(tc::triage_label({{"id", "b"}, {"outcome", "compile_failure"},
                            {"where", "fails to load, but onnxruntime-noopt loads it: Exception during initialization: FuseReluClip"}},
                           none) == "new");
    CHECK(tc::triage_label({{"id", "c"}, {"outcome", "compile_failure"},
                            {"where", "unsupported here, but onnxruntime-noopt runs it: Failed to find kernel for QuickGelu"}},
                           none) == "new");
}

}  // namespace campaign_triage_test
