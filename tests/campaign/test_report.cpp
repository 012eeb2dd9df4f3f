// The report's SVG writer and the folder merge: charts carry axes, round ticks,
// labels, a legend and one mark per series or bar, escape their text and survive
// empty or non-finite data; merging refuses folders of other settings.
#include <doctest/doctest.h>

#include <tensoracle/campaign/report.hpp>

#include <filesystem>
#include <fstream>
#include <regex>

#include <unistd.h>

// One namespace per file: test executables compile as one unity file (tests/CMakeLists.txt).
namespace campaign_report_test {

namespace tc = tensoracle::campaign;

namespace {
std::size_t count(const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (auto p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
    return n;
}
}  // namespace

TEST_CASE("report: a line chart has its axes, round ticks, labels, legend and one polyline per series") {
    tc::svg_chart c;
    c.title = "S_t <over> levels";
    c.x_label = "level t";
    c.y_label = "score";
    c.data.push_back({"a & b", {{-10, 0.5}, {0, 1.5}, {3, 2.0}}, {}});
    c.data.push_back({"c", {{-10, 0.1}, {3, std::nan("")}}, {}});
    const auto svg = c.render();
    CHECK(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0) == 0);
    CHECK(svg.find("</svg>") != std::string::npos);
    CHECK(count(svg, "<polyline class=\"series\"") == 2);
    CHECK(svg.find("S_t &lt;over&gt; levels") != std::string::npos);  // escaped
    CHECK(svg.find("a &amp; b") != std::string::npos);
    CHECK(svg.find(">level t<") != std::string::npos);
    CHECK(svg.find(">score<") != std::string::npos);
    CHECK(svg.find("nan") == std::string::npos);  // a non-finite point is left out
    // Round ticks on the x axis from -10 to 3: -10, -8, ..., 2.
    for (const char* t : {">-10<", ">-8<", ">-6<", ">0<", ">2<"}) CHECK(svg.find(t) != std::string::npos);
    CHECK(svg.find(">-7.83<") == std::string::npos);
}

TEST_CASE("report: a bar chart draws one rect per series and category, with the categories on the axis") {
    tc::svg_chart c;
    c.title = "errors";
    c.categories = {"exact", "<-12", ">=0"};
    c.data.push_back({"x", {}, {3, 0, 1}});
    c.data.push_back({"y", {}, {1, 2, 5}});
    const auto svg = c.render();
    CHECK(count(svg, "<rect class=\"bar\"") == 6);
    CHECK(svg.find("&lt;-12") != std::string::npos);
    CHECK(svg.find("&gt;=0") != std::string::npos);
    // Heights never negative, even for zero bars.
    const std::regex neg("height=\"-");
    CHECK_FALSE(std::regex_search(svg, neg));
}

TEST_CASE("report: an empty chart still renders its frame") {
    tc::svg_chart c;
    c.title = "nothing";
    const auto svg = c.render();
    CHECK(svg.find("<g class=\"axes\"") != std::string::npos);
    CHECK(count(svg, "<polyline") == 0);
}

TEST_CASE("report: merging refuses folders of another campaign and an existing target, and names why") {
    namespace fs = std::filesystem;
    const auto base = fs::temp_directory_path() / ("tensoracle-report-test-" + std::to_string(::getpid()));
    fs::create_directories(base / "a");
    fs::create_directories(base / "b");
    auto write = [](const fs::path& p, const std::string& text) { std::ofstream(p) << text; };
    const std::string summary = R"({"requested": 2, "signatures": [], "backends": {}})";
    write(base / "a" / "campaign.json", R"({"seed": 1, "config_hash": "x", "level": -4, "backends": [{"name": "b1"}]})");
    write(base / "b" / "campaign.json", R"({"seed": 2, "config_hash": "x", "level": -4, "backends": [{"name": "b1"}]})");
    write(base / "a" / "summary.json", summary);
    write(base / "b" / "summary.json", summary);
    CHECK_THROWS_WITH_AS((void)tc::merge_campaigns({base / "a", base / "b"}, base / "m"), doctest::Contains("another 'seed'"), tensoracle::error);
    CHECK_THROWS_WITH_AS((void)tc::merge_campaigns({}, base / "m"), doctest::Contains("no campaign folder"), tensoracle::error);
    CHECK_THROWS_WITH_AS((void)tc::merge_campaigns({base / "nowhere"}, base / "m"), doctest::Contains("no "), tensoracle::error);
    std::error_code ec;
    fs::remove_all(base, ec);
}

TEST_CASE("report: an infinite relative error (null in the journal, JSON has no infinity) is drawn in the last bin") {
    namespace fs = std::filesystem;
    const auto dir = fs::temp_directory_path() / ("tensoracle-report-inf-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    std::ofstream(dir / "summary.json") << R"({"requested": 2, "cases": 2, "signatures": [], "backends": {"b1": {"outcomes": {"mismatch": 1, "pass": 1}}}})";
    std::ofstream(dir / "results.jsonl")
        << R"({"index": 0, "case": "c0", "reference_seconds": 0.001, "backends": {"b1": {"outcome": "mismatch", "max_abs_error": 1.0, "max_rel_error": null, "seconds": 0.002}}})"
        << "\n"
        << R"({"index": 1, "case": "c1", "reference_seconds": 0.001, "backends": {"b1": {"outcome": "pass", "max_abs_error": 0.0, "max_rel_error": 0.0, "passing_level": -5, "seconds": 0.002}}})"
        << "\n";
    const auto path = tc::write_report(dir);
    std::ifstream in(path);
    const std::string html((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    CHECK(html.find("Largest relative error per case") != std::string::npos);
    std::error_code ec;
    fs::remove_all(dir, ec);
}

TEST_CASE("report: journal lines of the wrong shape are left out like lines cut by a kill, never half-read") {
    namespace fs = std::filesystem;
    const auto dir = fs::temp_directory_path() / ("tensoracle-report-shape-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const std::string good = R"({"index": 0, "case": "c0", "signatures": [{"id": "s1", "backend": "b1", "outcome": "crash", "oracle": "process", "where": "x"}], "backends": {"b1": {"outcome": "crash", "signature": "s1"}}})";
    std::ofstream(dir / "results.jsonl")
        << good << "\n"
        << R"({"index": 1, "case": "c1", "signatures": [{"backend": "b1"}], "backends": {}})" << "\n"          // a signature without id
        << R"({"index": 8, "case": "c8", "signatures": [{"id": "s2", "backend": "b1", "oracle": "process", "where": "x"}]})" << "\n"  // nor outcome
        << R"({"index": 2, "case": "c2", "backends": {"b1": {"outcome": 3}}})" << "\n"                      // an outcome that is no string
        << R"({"index": 3, "case": "c3", "backends": {"b1": {"outcome": "pass", "rewrites": [7]}}})" << "\n" // a rewrite that is no object
        << R"({"index": 4, "case": "c4", "derivation": "fresh"})" << "\n"                                  // a derivation that is no object
        << R"({"index": -5, "case": "c5"})" << "\n"                                                      // a negative index
        << R"({"index": 6, "case": "c6", "mutants": [{"backends": {"b1": {"outcome": "pass"}}, "signatures": {}}]})" << "\n"
        << R"({"index": 7, "case": "c7", "backends": {"b1": {"outcome": "pass", "passing_level": 1e300}}})" << "\n"
        << "[1, 2]\n";
    tc::summary_scope sc;
    sc.dir = dir;
    sc.backends = {"b1"};
    sc.includes = [](std::uint64_t) { return true; };
    sc.requested = 8;
    const auto s = tc::write_summary(sc);
    CHECK(s["cases"].get<std::size_t>() == 1);
    REQUIRE(s["signatures"].size() == 1);
    CHECK(s["signatures"][0]["id"] == "s1");
    CHECK_NOTHROW((void)tc::write_report(dir));
    std::error_code ec;
    fs::remove_all(dir, ec);
}

}  // namespace campaign_report_test
