# Conan 2 recipe for tensoracle. Conan is not in Debian, so this recipe is not
# exercised by CI here; it follows the conventional layout (fmt's recipe has
# the same option): header_only=True (the default) packages the headers, with
# no settings in package_id; header_only=False also builds and packages
# tensoracle::compiled, the compiled mode's static library (the registry and
# the AD rule tables compiled once; see include/tensoracle/core/compiled.hpp).
from conan import ConanFile
from conan.tools.build import check_min_cppstd
from conan.tools.cmake import CMake, CMakeToolchain, cmake_layout
from conan.tools.files import copy
import os


class TensoracleConan(ConanFile):
    name = "tensoracle"
    version = "0.1.0"
    description = "Header-only C++20 test kit for deep-learning compilers and AD engines, with a compiled mode"
    license = "MIT"
    topics = ("testing", "deep-learning", "compilers", "autodiff", "onnx", "header-only")
    settings = "os", "arch", "compiler", "build_type"
    options = {"header_only": [True, False], "fPIC": [True, False]}
    default_options = {"header_only": True, "fPIC": True}
    exports_sources = "include/*", "src/*", "CMakeLists.txt", "cmake/*", "LICENSE"

    def config_options(self):
        if self.settings.os == "Windows":
            del self.options.fPIC

    def configure(self):
        if self.options.header_only:
            self.package_type = "header-library"
            self.options.rm_safe("fPIC")
        else:
            self.package_type = "static-library"

    def requirements(self):
        # Pinned to the versions Debian 12 ships (libxtensor-dev 0.24.3, xtl-dev 0.7.2, libboost-dev 1.74).
        self.requires("xtensor/0.24.3", transitive_headers=True)
        self.requires("xtl/0.7.2", transitive_headers=True)
        self.requires("boost/1.74.0", transitive_headers=True, options={"header_only": True})

    def validate(self):
        check_min_cppstd(self, 20)

    def layout(self):
        cmake_layout(self)

    def package_id(self):
        if self.info.options.header_only:
            self.info.clear()

    def generate(self):
        if self.options.header_only:
            return
        tc = CMakeToolchain(self)
        for option in ("TESTS", "EXAMPLES", "BENCHMARKS", "CLI"):
            tc.cache_variables[f"TENSORACLE_BUILD_{option}"] = False
        tc.cache_variables["TENSORACLE_BUILD_COMPILED"] = True
        tc.cache_variables["TENSORACLE_INSTALL"] = True
        tc.cache_variables["TENSORACLE_WITH_ONNX"] = False
        tc.cache_variables["TENSORACLE_WITH_CUDA"] = False
        tc.generate()

    def build(self):
        if not self.options.header_only:
            cmake = CMake(self)
            cmake.configure()
            cmake.build(target="tensoracle_compiled")

    def package(self):
        copy(self, "LICENSE", self.source_folder, os.path.join(self.package_folder, "licenses"))
        copy(self, "*.hpp", os.path.join(self.source_folder, "include"), os.path.join(self.package_folder, "include"))
        if not self.options.header_only:
            copy(self, "*.a", self.build_folder, os.path.join(self.package_folder, "lib"), keep_path=False)
            copy(self, "*.lib", self.build_folder, os.path.join(self.package_folder, "lib"), keep_path=False)

    def package_info(self):
        self.cpp_info.set_property("cmake_file_name", "tensoracle")
        headers = self.cpp_info.components["headers"]
        headers.set_property("cmake_target_name", "tensoracle::tensoracle")
        headers.bindirs = []
        headers.libdirs = []
        headers.requires = ["xtensor::xtensor", "xtl::xtl", "boost::headers"]
        if not self.options.header_only:
            compiled = self.cpp_info.components["compiled"]
            compiled.set_property("cmake_target_name", "tensoracle::compiled")
            compiled.libs = ["tensoracle"]
            compiled.defines = ["TENSORACLE_COMPILED"]
            compiled.requires = ["headers"]
