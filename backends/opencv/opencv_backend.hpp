// tensoracle: OpenCV DNN (4.6, Debian's libopencv-dev) as a campaign backend,
// in process: cv::dnn::readNetFromONNX on the case's model, the CPU backend
// and target, one forward pass. The campaign runs it as a callable_backend in
// a forked child, so a crash or hang inside OpenCV is classified, not fatal.
//
// What OpenCV DNN's API cannot express is adapted here, and said so:
//  - it computes in float32 and keeps no element types: float32 inputs only
//    (others are "unsupported"), outputs converted to the graph's declared
//    output dtype;
//  - its blobs have at least two dimensions: an output whose declared shape is
//    the blob's with leading or trailing 1s dropped (rank 0 or 1) takes the
//    declared shape; any other shape difference is reported as it is.
// Unsupported vs compile failure by evidence: a layer OpenCV cannot create
// ("Can't create layer"), an unsupported type or attribute ("unsupported",
// "not supported") is unsupported; any other import error is a compile failure.
#pragma once

#include <opencv2/core.hpp>
#include <opencv2/core/utils/logger.hpp>
#include <opencv2/dnn.hpp>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include <unistd.h>

#include <tensoracle/campaign/backend.hpp>
#include <tensoracle/io/onnx.hpp>

namespace tensoracle::backends {

namespace detail {

/// An exception thrown while stderr was captured, with what was written meanwhile.
struct captured_failure {
    std::exception_ptr error;
    std::string log;
};

/// Lower-case copy, for matching OpenCV's messages.
inline std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
}

/// What OpenCV writes to stderr while `f` runs (its importer logs the reason for a
/// failure there and throws a bare "in function 'handleNode'"), read back.
template <class F>
std::string capturing_stderr(F&& f) {
    std::fflush(stderr);
    std::cerr.flush();
    const int saved = ::dup(2);
    std::FILE* tmp = std::tmpfile();
    if (saved < 0 || tmp == nullptr) {
        if (saved >= 0) ::close(saved);
        if (tmp) std::fclose(tmp);
        f();
        return {};
    }
    ::dup2(::fileno(tmp), 2);
    struct restore {
        int saved;
        ~restore() {
            std::fflush(stderr);
            std::cerr.flush();
            ::dup2(saved, 2);
            ::close(saved);
        }
    };
    std::string text;
    {
        restore r{saved};
        try {
            f();
        } catch (...) {
            std::fflush(stderr);
            std::cerr.flush();
            std::rewind(tmp);
            char buf[4096];
            std::size_t n;
            while ((n = std::fread(buf, 1, sizeof buf, tmp)) > 0) text.append(buf, n);
            std::fclose(tmp);
            throw captured_failure{std::current_exception(), text};
        }
    }
    std::fclose(tmp);
    return text;
}

/// OpenCV's exception as the kit's, with what it logged: unsupported when OpenCV says
/// it lacks something (a layer, a type, an attribute value).
[[noreturn]] inline void rethrow_opencv(const cv::Exception& e, const std::string& where, const std::string& log = {}) {
    // One line that says which node and why: the "> Node [Op@domain]:(...) parse error: ..."
    // line of the importer's message when there is one, else the message and the log's ERROR line.
    auto lines = [](const std::string& text) {
        std::vector<std::string> out;
        std::size_t b = 0;
        while (b < text.size()) {
            auto eol = text.find('\n', b);
            if (eol == std::string::npos) eol = text.size();
            out.push_back(text.substr(b, eol - b));
            b = eol + 1;
        }
        return out;
    };
    std::string detail;
    for (const auto& l : lines(e.what())) {
        if (l.rfind("> Node ", 0) == 0) detail = l.substr(2);
    }
    if (detail.empty()) {
        for (const auto& l : lines(e.what())) detail += (detail.empty() ? "" : " ") + l;
        for (const auto& l : lines(log)) {
            if (l.find("ERROR") != std::string::npos) {
                detail += " | " + l.substr(0, 400);
                break;
            }
        }
    }
    const auto m = lower(e.what() + std::string(" ") + log);
    if (m.find("can't create layer") != std::string::npos || m.find("unsupported") != std::string::npos ||
        m.find("not supported") != std::string::npos || m.find("not implemented") != std::string::npos) {
        throw unsupported_error(where, detail);
    }
    throw error(where, detail);
}

/// `t` (float32) as an OpenCV blob of the same shape, sharing nothing.
inline cv::Mat to_blob(const tensor& t) {
    std::vector<int> dims;
    for (const auto d : t.shape()) dims.push_back(static_cast<int>(d));
    if (dims.empty()) dims.push_back(1);
    if (dims.size() == 1) dims.insert(dims.begin(), 1);  // a Mat has >= 2 dims
    cv::Mat m(static_cast<int>(dims.size()), dims.data(), CV_32F);
    const auto v = t.values<float>();
    std::copy(v.begin(), v.end(), m.ptr<float>());
    return m;
}

/// A blob read back as a tensor of the declared dtype and, where only OpenCV's
/// two-dimension floor differs, the declared shape.
inline tensor from_blob(const cv::Mat& blob, dtype declared, const std::optional<shape_type>& declared_shape) {
    cv::Mat m;
    blob.convertTo(m, CV_64F);
    shape_type shape;
    for (int i = 0; i < m.dims; ++i) shape.push_back(static_cast<std::size_t>(m.size[i]));
    if (declared_shape && declared_shape->size() < 2 && shape.size() == 2) {
        shape_type stripped;
        for (const auto d : shape) {
            if (d != 1) stripped.push_back(d);
        }
        if (stripped.size() <= declared_shape->size() && element_count(*declared_shape, "opencv") == m.total()) shape = *declared_shape;
    }
    tensor out = tensor::zeros(declared, shape);
    const double* src = m.ptr<double>();
    out.visit([&](auto dst) {
        using T = typename decltype(dst)::value_type;
        for (std::size_t i = 0; i < dst.size(); ++i) dst[i] = value_cast<T>(src[i]);
    });
    return out;
}

}  // namespace detail

/// The OpenCV DNN backend's preparer: imports the model, returns its runner.
inline campaign::case_preparer opencv_preparer() {
    return [](const graph::graph& g) -> campaign::case_runner {
        const std::string where = "opencv";
        cv::utils::logging::setLogLevel(cv::utils::logging::LOG_LEVEL_ERROR);
        for (const auto& in : g.inputs) {
            if (in.type != dtype::f32) {
                throw unsupported_error(where, "OpenCV DNN takes float32 inputs; '" + in.name + "' is " + std::string(name(in.type)));
            }
        }
        const std::string bytes = io::to_model_proto(g).SerializeAsString();
        cv::dnn::Net net;
        try {
            (void)detail::capturing_stderr([&] {
                net = cv::dnn::readNetFromONNX(bytes.data(), bytes.size());
                net.setPreferableBackend(cv::dnn::DNN_BACKEND_OPENCV);
                net.setPreferableTarget(cv::dnn::DNN_TARGET_CPU);
            });
        } catch (const detail::captured_failure& f) {
            try {
                std::rethrow_exception(f.error);
            } catch (const cv::Exception& e) {
                detail::rethrow_opencv(e, where, f.log);
            }
        }
        if (net.empty()) throw error(where, "readNetFromONNX returned an empty network");
        return [net, g, where](const std::vector<tensor>& inputs) mutable {
            std::vector<tensor> out;
            std::vector<cv::Mat> blobs;
            try {
                (void)detail::capturing_stderr([&] {
                    for (std::size_t k = 0; k < inputs.size() && k < g.inputs.size(); ++k) net.setInput(detail::to_blob(inputs[k]), g.inputs[k].name);
                    std::vector<std::string> names;
                    for (const auto& o : g.outputs) names.push_back(o.name);
                    net.forward(blobs, names);
                });
            } catch (const detail::captured_failure& f) {
                try {
                    std::rethrow_exception(f.error);
                } catch (const cv::Exception& e) {
                    detail::rethrow_opencv(e, where, f.log);
                }
            }
            if (blobs.size() != g.outputs.size()) {
                throw error(where, "forward returned " + std::to_string(blobs.size()) + " outputs for " + std::to_string(g.outputs.size()));
            }
            for (std::size_t k = 0; k < blobs.size(); ++k) out.push_back(detail::from_blob(blobs[k], g.outputs[k].type, g.outputs[k].shape));
            return out;
        };
    };
}

/// "OpenCV 4.6.0" (the library this was built and linked with).
inline std::string opencv_version() { return std::string("OpenCV ") + CV_VERSION; }

}  // namespace tensoracle::backends
