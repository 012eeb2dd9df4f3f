// tensoracle conformance: runs ONNX backend node tests (or any folder of the
// same layout) on the reference interpreter and reports per op.
//   tensoracle_conformance [--root DIR] [--filter REGEX] [--json FILE] [--show failed|skipped|all|none]
// Exit status 0 when the pass rate over supported tests reaches --min-pass-rate.
#include <fstream>
#include <iostream>

#include <CLI/CLI.hpp>

#include <tensoracle/io/conformance.hpp>

#ifndef TENSORACLE_ONNX_NODE_TESTS
#define TENSORACLE_ONNX_NODE_TESTS "/usr/share/libonnx-testdata/data/node"
#endif

int main(int argc, char** argv) {
    std::string root = TENSORACLE_ONNX_NODE_TESTS;
    std::string json_path, show = "failed";
    double min_pass_rate = 0.97;
    tensoracle::io::conformance_options options;
    CLI::App app{"Run ONNX backend node tests on tensoracle's reference interpreter"};
    app.add_option("--root", root, "folder of test_* folders (model.onnx + test_data_set_*)");
    app.add_option("--filter", options.filter, "regex on test names");
    app.add_option("--json", json_path, "write the full report as JSON");
    app.add_option("--rtol", options.rtol, "relative tolerance (ONNX runner default 1e-3)");
    app.add_option("--atol", options.atol, "absolute tolerance (ONNX runner default 1e-7)");
    app.add_option("--min-pass-rate", min_pass_rate, "exit 1 below this share of supported tests passing")
        ->check(CLI::Range(0.0, 1.0));
    app.add_option("--show", show, "which cases to list with their reasons")
        ->check(CLI::IsMember({"failed", "skipped", "all", "none"}));
    CLI11_PARSE(app, argc, argv);

    try {
        const auto report = tensoracle::io::run_conformance(root, options);
        report.print_table(std::cout);
        for (const auto& c : report.cases) {
            const bool list = show == "all" || (show == "failed" && c.status == tensoracle::io::case_status::failed) ||
                              (show == "skipped" && c.status != tensoracle::io::case_status::passed);
            if (list && c.status != tensoracle::io::case_status::passed) {
                std::cout << tensoracle::io::to_string(c.status) << ": " << c.name << ": " << c.reason << "\n";
            }
        }
        if (!json_path.empty()) {
            std::ofstream(json_path) << report.to_json();
            std::cout << "wrote " << json_path << "\n";
        }
        std::cout << "pass rate over supported tests: " << 100.0 * report.pass_rate() << "% (required "
                  << 100.0 * min_pass_rate << "%)\n";
        std::cout << report.summary() << "\n";
        return report.pass_rate() >= min_pass_rate ? 0 : 1;
    } catch (const std::exception& e) {
        std::cerr << "tensoracle_conformance: " << e.what() << "\n";
        return 2;
    }
}
