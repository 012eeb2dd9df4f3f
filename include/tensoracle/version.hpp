// tensoracle: version of the kit.
#pragma once

#define TENSORACLE_VERSION_MAJOR 0
#define TENSORACLE_VERSION_MINOR 1
#define TENSORACLE_VERSION_PATCH 0

namespace tensoracle {
inline constexpr const char* version_string = "0.1.0";
}
