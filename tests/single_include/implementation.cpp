// The single header in compiled mode: the target defines TENSORACLE_COMPILED
// for every file, and this one file also TENSORACLE_IMPLEMENTATION, so it holds
// the registry and the AD rule tables that the other files only declare.
#define TENSORACLE_IMPLEMENTATION
#include <tensoracle/tensoracle.hpp>
