#ifndef KIOSKCAM_CLIBFUZZER_SHIM_H
#define KIOSKCAM_CLIBFUZZER_SHIM_H
#include <stddef.h>
#include <stdint.h>

/* libFuzzer's driver (compiler-rt FuzzerInterface.h). Defined only in a program linked
   with -sanitize=fuzzer; the fuzz targets call it only when built with -DFUZZING. */
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));
#endif
