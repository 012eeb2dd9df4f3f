/* tensoracle: the data path of the `mlir` backends (backends/mlir/tosa_lowering.hpp).
 *
 * The lowered module's @main calls tensoracle_load_<type>(memref, k) for graph input k
 * and tensoracle_store_<type>(memref, k) for output k; MLIR's C interface passes each
 * memref as an unranked descriptor. These functions copy the exact bytes between the
 * memref and $TENSORACLE_MLIR_IO/input_k.bin or output_k.bin (raw little-endian
 * elements, row-major; bools one byte each). mlir-cpu-runner loads this library with
 * -shared-libs. MLIR's own runtime printers print text, and only for a few types.
 *
 * A missing file or a size that does not match is a message on stderr and exit
 * status 2 (the backend reports it as a runtime error, naming the file). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* MLIR's UnrankedMemRefType: the rank, then a pointer to the ranked descriptor
 * { T* allocated; T* aligned; int64_t offset; int64_t sizes[rank]; int64_t strides[rank]; }. */
typedef struct {
  int64_t rank;
  void* descriptor;
} tensoracle_unranked_memref;

static void tensoracle_copy(const tensoracle_unranked_memref* m, int64_t index, int64_t element_bytes, int store) {
  char* const* pointers = (char* const*)m->descriptor;
  char* aligned = pointers[1];
  const int64_t* fields = (const int64_t*)(pointers + 2);
  const int64_t offset = fields[0];
  const int64_t* sizes = fields + 1;
  const int64_t* strides = fields + 1 + m->rank;
  int64_t count = 1;
  int64_t expected_stride = 1;
  for (int64_t i = m->rank; i-- > 0;) {
    /* memref.alloc gives the identity layout; anything else would need a strided walk. */
    if (sizes[i] != 1 && strides[i] != expected_stride) {
      fprintf(stderr, "tensoracle-mlir-io: %s %lld: memref is not contiguous (dim %lld stride %lld)\n", store ? "output" : "input",
              (long long)index, (long long)i, (long long)strides[i]);
      exit(2);
    }
    expected_stride *= sizes[i];
    count *= sizes[i];
  }
  const char* dir = getenv("TENSORACLE_MLIR_IO");
  char path[4096];
  snprintf(path, sizeof path, "%s/%s_%lld.bin", dir && *dir ? dir : ".", store ? "output" : "input", (long long)index);
  FILE* f = fopen(path, store ? "wb" : "rb");
  if (!f) {
    fprintf(stderr, "tensoracle-mlir-io: cannot open %s: %s\n", path, strerror(errno));
    exit(2);
  }
  const size_t bytes = (size_t)(count * element_bytes);
  char* data = aligned + offset * element_bytes;
  size_t done = store ? fwrite(data, 1, bytes, f) : fread(data, 1, bytes, f);
  int extra = 0;
  if (!store && done == bytes) extra = fgetc(f) != EOF;
  fclose(f);
  if (done != bytes || extra) {
    fprintf(stderr, "tensoracle-mlir-io: %s holds %s bytes than the memref's %zu\n", path, extra ? "more" : "fewer", bytes);
    exit(2);
  }
}

#define TENSORACLE_MLIR_IO(T, BYTES)                                                                                          \
  void _mlir_ciface_tensoracle_load_##T(tensoracle_unranked_memref* m, int64_t k) { tensoracle_copy(m, k, BYTES, 0); }  \
  void _mlir_ciface_tensoracle_store_##T(tensoracle_unranked_memref* m, int64_t k) { tensoracle_copy(m, k, BYTES, 1); }

TENSORACLE_MLIR_IO(f16, 2)
TENSORACLE_MLIR_IO(bf16, 2)
TENSORACLE_MLIR_IO(f32, 4)
TENSORACLE_MLIR_IO(f64, 8)
TENSORACLE_MLIR_IO(i1, 1)
TENSORACLE_MLIR_IO(i8, 1)
TENSORACLE_MLIR_IO(i16, 2)
TENSORACLE_MLIR_IO(i32, 4)
TENSORACLE_MLIR_IO(i64, 8)
