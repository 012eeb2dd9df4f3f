// The op registry and AD rule tables of every test executable, compiled once
// per build instead of once per test file (TENSORACLE_SEPARATE_REGISTRY).
#include <tensoracle/registry_definition.hpp>
