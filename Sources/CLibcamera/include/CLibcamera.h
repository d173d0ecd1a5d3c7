#ifndef KIOSKCAM_CLIBCAMERA_H
#define KIOSKCAM_CLIBCAMERA_H
/*
 * A small C API over libcamera (which has only C++), for Swift. Plain C: opaque handles,
 * fixed-size structs, error codes with a message. Every call is safe to make with an
 * error pointer of NULL. Symbols are prefixed klc_.
 *
 * Threads: libcamera completes requests on its own thread; the shim queues them and
 * makes `klc_camera_event_fd` readable, so the caller's capture thread polls that fd and
 * calls `klc_camera_dequeue` / `klc_camera_requeue`. Nothing calls back into Swift.
 */
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Why a call failed (`klc_error.code`). */
enum klc_code {
    KLC_OK = 0,
    /** No camera with that id (or none at all). */
    KLC_NOT_FOUND = 1,
    /** Another process (or handle) holds the camera. */
    KLC_BUSY = 2,
    /** The camera cannot be configured as asked. */
    KLC_INVALID = 3,
    /** The camera went away (unplugged, driver unbound). */
    KLC_DISCONNECTED = 4,
    /** A control the camera does not have, or of a type the shim does not set. */
    KLC_UNSUPPORTED = 5,
    /** Anything else: the message says what; `system_errno` when the kernel said why. */
    KLC_SYSTEM = 6,
};

typedef struct klc_error {
    int code;
    /** An errno value (positive), or 0. */
    int system_errno;
    char message[512];
} klc_error;

/** libcamera's version the shim was built against, e.g. "0.0.3". */
const char *klc_version(void);

typedef struct klc_manager klc_manager;
typedef struct klc_camera klc_camera;

/** Starts libcamera's camera manager (enumerates cameras through udev). */
klc_manager *klc_manager_start(klc_error *error);
/** Stops the manager; every camera from it must be closed first. */
void klc_manager_stop(klc_manager *manager);
/** Cameras listed now. */
int klc_manager_camera_count(klc_manager *manager);
/** The id of camera `index` copied into `id` (NUL-terminated, truncated to `capacity`). */
int klc_manager_camera_id(klc_manager *manager, int index, char *id, size_t capacity);

/**
 * Gets a camera by id (NULL or "": the first). It can be described at once; `klc_camera_configure`
 * acquires it for this process.
 */
klc_camera *klc_camera_get(klc_manager *manager, const char *id, klc_error *error);
/** Stops, releases and frees everything the camera handle owns. */
void klc_camera_close(klc_camera *camera);

/** The camera's id and model (the Model property, or "" when it has none). */
void klc_camera_id(klc_camera *camera, char *id, size_t capacity);
void klc_camera_model(klc_camera *camera, char *model, size_t capacity);

/* Describing the video stream the camera offers (for the VideoRecording role). */

/** Pixel formats offered; -1 with `error` set when the camera gives no configuration. */
int klc_camera_format_count(klc_camera *camera, klc_error *error);
/** libcamera's name of format `index` ("NV12", "YUV420", "RGB888", …). */
int klc_camera_format_name(klc_camera *camera, int index, char *name, size_t capacity);

typedef struct klc_size_range {
    uint32_t min_width, min_height, max_width, max_height;
    /** 0 when the range gives no steps. */
    uint32_t width_step, height_step;
} klc_size_range;

/** Discrete sizes listed for format `index`; `sizes` receives up to `capacity`. */
int klc_camera_format_sizes(klc_camera *camera, int index, klc_size_range *sizes, int capacity);
/** The range of sizes of format `index`: 1 when given, 0 when not. */
int klc_camera_format_range(klc_camera *camera, int index, klc_size_range *range);

/* Controls. */

enum klc_control_type {
    KLC_CONTROL_BOOL = 1,
    KLC_CONTROL_INTEGER = 2,
    KLC_CONTROL_FLOAT = 3,
    KLC_CONTROL_RECTANGLE = 4,
    KLC_CONTROL_OTHER = 5,
};

typedef struct klc_control_info {
    char name[64];
    int type;
    /** Numeric bounds and default (0 when not numeric). */
    double minimum, maximum, default_value;
} klc_control_info;

int klc_camera_control_count(klc_camera *camera);
int klc_camera_control(klc_camera *camera, int index, klc_control_info *info);

typedef struct klc_rectangle {
    int32_t x, y;
    uint32_t width, height;
} klc_rectangle;

/** The largest ScalerCrop (the whole sensor area usable for zoom): 1 when offered, else 0. */
int klc_camera_scaler_crop_maximum(klc_camera *camera, klc_rectangle *rectangle);

/**
 * Sets a control by libcamera's name (bool, integer or float); applied to the next request
 * queued, and to `klc_camera_start`'s first requests.
 */
int klc_camera_set_control(klc_camera *camera, const char *name, double value, klc_error *error);
/**
 * Sets AfWindows to one rectangle (in ScalerCropMaximum's coordinates) for tap-to-focus:
 * 0, or -1 with `error` (KLC_UNSUPPORTED) when the camera does not list AfWindows.
 */
int klc_camera_set_af_window(klc_camera *camera, klc_rectangle window, klc_error *error);
/** Sets ScalerCrop (digital zoom): 0, or -1 with `error` when the camera has no ScalerCrop. */
int klc_camera_set_scaler_crop(klc_camera *camera, klc_rectangle crop, klc_error *error);

/* Streaming. */

typedef struct klc_stream_config {
    char format[32];
    uint32_t width, height;
    /** Row stride of plane 0, in bytes. */
    uint32_t stride;
    /** Bytes one frame occupies (all planes, as libcamera computes it). */
    uint32_t frame_size;
    uint32_t buffer_count;
} klc_stream_config;

/**
 * Acquires the camera and configures one VideoRecording stream of `format` at `width`x`height`.
 * libcamera may adjust the size (and format); `result` says what was set, and `adjusted`
 * is set to 1 when anything changed. Allocates and maps the buffers.
 */
int klc_camera_configure(klc_camera *camera, const char *format, uint32_t width, uint32_t height,
                         uint32_t buffer_count, klc_stream_config *result, int *adjusted, klc_error *error);

/**
 * Starts streaming and queues every buffer. `frame_duration_us` > 0 asks for that frame duration
 * through FrameDurationLimits where the camera offers it.
 */
int klc_camera_start(klc_camera *camera, int64_t frame_duration_us, klc_error *error);
/** Stops streaming (completes every queued request as cancelled, then drops them). */
void klc_camera_stop(klc_camera *camera);

/**
 * Ends a stream that failed (no frames, or a disconnect). Waits up to `wait_ms` for libcamera
 * to report the camera disconnected; then stops it and returns 1. Otherwise the camera is
 * left running and the handle is kept for the rest of the process (its close does nothing):
 * libcamera 0.0.3 aborts in stop() when the device vanished before it noticed. Returns 0 then.
 */
int klc_camera_end_failed(klc_camera *camera, int wait_ms);

/** Readable when a completed request is waiting, or the camera was disconnected. */
int klc_camera_event_fd(klc_camera *camera);

enum { KLC_MAX_PLANES = 3 };

typedef struct klc_frame {
    /** The buffer's index, for `klc_camera_requeue`. */
    int index;
    /** 0: complete; 1: the driver flagged an error; 2: cancelled. */
    int status;
    uint32_t sequence;
    /** CLOCK_MONOTONIC nanoseconds. */
    uint64_t timestamp_ns;
    int plane_count;
    /** The mapped planes; `bytes_used` as the driver filled them. */
    const uint8_t *planes[KLC_MAX_PLANES];
    uint32_t plane_length[KLC_MAX_PLANES];
    uint32_t bytes_used[KLC_MAX_PLANES];
    /** 1 when the planes follow each other in one mapping (planes[0] spans all of them). */
    int contiguous;
} klc_frame;

/**
 * Takes one completed request off the queue (and empties the event fd when it was the last).
 * Returns 1 with `frame` filled, 0 when none is waiting, -1 with KLC_DISCONNECTED once the
 * camera went away (after every frame that completed before that).
 */
int klc_camera_dequeue(klc_camera *camera, klc_frame *frame, klc_error *error);
/** Gives buffer `index` back to the camera: queues its request again, with pending controls. */
int klc_camera_requeue(klc_camera *camera, int index, klc_error *error);

#ifdef __cplusplus
}
#endif
#endif
