# Conan 2 recipe for tensoracle (header-only). Conan is not in Debian, so this
# recipe is not exercised by CI here; it follows the conventional layout for
# header libraries (package_type, no settings in package_id, CMakeDeps names).
from conan import ConanFile
from conan.tools.build import check_min_cppstd
from conan.tools.cmake import CMake, CMakeToolchain, cmake_layout
from conan.tools.files import copy
import os


class TensoracleConan(ConanFile):
    name = "tensoracle"
    version = "0.1.0"
    description = "Header-only C++20 test kit for deep-learning compilers and AD engines"
    license = "MIT"
    topics = ("testing", "deep-learning", "compilers", "autodiff", "onnx", "header-only")
    package_type = "header-library"
    settings = "os", "arch", "compiler", "build_type"
    exports_sources = "include/*", "CMakeLists.txt", "cmake/*", "LICENSE"
    no_copy_source = True

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
        self.info.clear()

    def package(self):
        copy(self, "LICENSE", self.source_folder, os.path.join(self.package_folder, "licenses"))
        copy(self, "*.hpp", os.path.join(self.source_folder, "include"), os.path.join(self.package_folder, "include"))

    def package_info(self):
        self.cpp_info.set_property("cmake_file_name", "tensoracle")
        self.cpp_info.set_property("cmake_target_name", "tensoracle::tensoracle")
        self.cpp_info.bindirs = []
        self.cpp_info.libdirs = []
        self.cpp_info.requires = ["xtensor::xtensor", "xtl::xtl", "boost::headers"]
