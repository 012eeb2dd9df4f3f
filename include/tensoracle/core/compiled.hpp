// tensoracle: the switch between the header-only kit and its compiled mode.
//
// Header-only (the default): every function the kit defines is inline in its
// header, and each translation unit that uses one compiles it again.
//
// Compiled mode (TENSORACLE_COMPILED, set for every file of a target by linking
// the CMake target tensoracle::compiled): the heavy parts (the op registry and
// the AD rule tables over every op, and the out-of-line bodies of the graph
// generator) are compiled once, into that library; the headers only declare
// them, so including them instantiates nothing heavy. The by-name entry points
// (ops::get_op, spec::evaluate, op_engine("Softmax"), the interpreter) become
// cheap to include; the typed ones (ops::Conv::compute<float>,
// op_engine<ops::Softmax>) stay templates in the headers in both modes.
//
// With the single header (single_include/), there is no library: define
// TENSORACLE_COMPILED for every file of the target and, in exactly one of
// them, TENSORACLE_IMPLEMENTATION before the include; that file then holds
// what the library would (doctest's and stb's convention).
//
// A header with out-of-line bodies keeps them in a detail/*_impl.hpp file of
// its layer: its functions are marked TENSORACLE_INLINE, and the header includes
// that file last, unless it is a compiled-mode file that does not implement.
#pragma once

#if defined(TENSORACLE_IMPLEMENTATION) && !defined(TENSORACLE_COMPILED)
#error "tensoracle: TENSORACLE_IMPLEMENTATION only means something with TENSORACLE_COMPILED defined for the whole target (see tensoracle/core/compiled.hpp)"
#endif

#ifdef TENSORACLE_COMPILED
/// Out-of-line functions have one definition, in the compiled library (or the
/// one TENSORACLE_IMPLEMENTATION file).
#define TENSORACLE_INLINE
#else
/// Out-of-line functions are inline in the header-only kit.
#define TENSORACLE_INLINE inline
#endif

/// True where this file must see the out-of-line bodies: header-only, or the
/// one compiled-mode file that implements the kit.
#if !defined(TENSORACLE_COMPILED) || defined(TENSORACLE_IMPLEMENTATION)
#define TENSORACLE_HAS_BODIES 1
#else
#define TENSORACLE_HAS_BODIES 0
#endif
