#ifndef KIOSKCAM_CLIBCAMERASYSTEM_SHIM_H
#define KIOSKCAM_CLIBCAMERASYSTEM_SHIM_H
/* libcamera's headers are C++; only its version macros are plain C. CLibcamera (C++)
   wraps the rest in a C API. */
#include <libcamera/version.h>
#endif
