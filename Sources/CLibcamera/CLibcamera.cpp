// The C API of CLibcamera.h over libcamera's C++ API. Kept to what kioskcam records
// with: one VideoRecording stream, its buffers mapped once, completed requests queued
// for the caller's thread behind an eventfd. Version differences are handled here, at
// the seams, with libcamera's version macros (0.0.3 in Debian bookworm, 0.3+ in
// Raspberry Pi OS).

#include "CLibcamera.h"

#include <libcamera/camera.h>
#include <libcamera/camera_manager.h>
#include <libcamera/control_ids.h>
#include <libcamera/controls.h>
#include <libcamera/formats.h>
#include <libcamera/framebuffer.h>
#include <libcamera/framebuffer_allocator.h>
#include <libcamera/property_ids.h>
#include <libcamera/request.h>
#include <libcamera/stream.h>
#include <libcamera/version.h>

#if LIBCAMERA_VERSION_MAJOR > 0 || LIBCAMERA_VERSION_MINOR >= 3
#define KLC_HAS_ORIENTATION 1
#include <libcamera/orientation.h>
#else
#define KLC_HAS_ORIENTATION 0
#include <libcamera/transform.h>
#endif

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

using namespace libcamera;

namespace {

void fail(klc_error *error, int code, int system_errno, const char *format, ...)
    __attribute__((format(printf, 4, 5)));

void fail(klc_error *error, int code, int system_errno, const char *format, ...) {
    if (!error) return;
    error->code = code;
    error->system_errno = system_errno;
    va_list arguments;
    va_start(arguments, format);
    vsnprintf(error->message, sizeof error->message, format, arguments);
    va_end(arguments);
}

void clear(klc_error *error) {
    if (!error) return;
    error->code = KLC_OK;
    error->system_errno = 0;
    error->message[0] = 0;
}

void copy(const std::string &text, char *out, size_t capacity) {
    if (!out || capacity == 0) return;
    snprintf(out, capacity, "%s", text.c_str());
}

/// libcamera allows one CameraManager per process (a second one is a fatal error inside
/// libcamera): every klc_manager handle shares it, counted.
struct SharedManager {
    std::mutex lock;
    std::unique_ptr<CameraManager> manager;
    int users = 0;
};

/// Never destroyed: a camera left running (klc_camera_end_failed) must not meet
/// CameraManager's destructor at exit.
SharedManager &shared() {
    static SharedManager *instance = new SharedManager;
    return *instance;
}

/// The one video stream's configuration, generated for the VideoRecording role.
std::unique_ptr<CameraConfiguration> videoConfiguration(Camera &camera) {
#if LIBCAMERA_VERSION_MAJOR > 0 || LIBCAMERA_VERSION_MINOR >= 3
    // 0.3 and later take a span of roles.
    const std::array<StreamRole, 1> roles{StreamRole::VideoRecording};
    return camera.generateConfiguration(roles);
#else
    // 0.0.x takes a std::vector (StreamRoles).
    return camera.generateConfiguration(StreamRoles{StreamRole::VideoRecording});
#endif
}

/// Frames upright as the sensor gives them: kioskcam rotates nothing here.
void keepSensorOrientation(CameraConfiguration &config) {
#if KLC_HAS_ORIENTATION
    config.orientation = Orientation::Rotate0;
#else
    config.transform = Transform::Identity;
#endif
}

bool orientationChanged(const CameraConfiguration &config) {
#if KLC_HAS_ORIENTATION
    return config.orientation != Orientation::Rotate0;
#else
    return config.transform != Transform::Identity;
#endif
}

/// One mapping of a dmabuf (planes of a buffer often share one).
struct Mapping {
    void *address = MAP_FAILED;
    size_t length = 0;
};

} // namespace

struct klc_manager {
    CameraManager *manager = nullptr;
};

struct klc_camera {
    klc_manager *owner = nullptr;
    std::shared_ptr<Camera> camera;
    std::unique_ptr<CameraConfiguration> described;
    bool acquired = false;
    bool running = false;

    std::unique_ptr<CameraConfiguration> config;
    Stream *stream = nullptr;
    std::unique_ptr<FrameBufferAllocator> allocator;
    std::vector<std::unique_ptr<Request>> requests;
    std::vector<Mapping> mappings;
    /// Per buffer: its planes' addresses and whether they follow each other.
    struct BufferPlanes {
        std::vector<const uint8_t *> addresses;
        std::vector<uint32_t> lengths;
        bool contiguous = true;
    };
    std::vector<BufferPlanes> planes;

    int eventFD = -1;
    std::mutex lock;
    std::condition_variable changed;
    /// Left running after a failure (see klc_camera_end_failed): never freed.
    bool abandoned = false;
    std::deque<Request *> completed;
    bool disconnected = false;
    /// Controls waiting for the next queued request.
    ControlList pending{controls::controls};

    void signal() {
        uint64_t one = 1;
        ssize_t written;
        do { written = write(eventFD, &one, sizeof one); } while (written < 0 && errno == EINTR);
    }

    /// On libcamera's thread.
    void requestCompleted(Request *request) {
        {
            std::lock_guard<std::mutex> guard(lock);
            completed.push_back(request);
        }
        signal();
    }

    /// On libcamera's thread.
    void cameraDisconnected() {
        {
            std::lock_guard<std::mutex> guard(lock);
            disconnected = true;
        }
        changed.notify_all();
        signal();
    }

    void unmapAll() {
        for (auto &mapping : mappings) {
            if (mapping.address != MAP_FAILED) munmap(mapping.address, mapping.length);
        }
        mappings.clear();
        planes.clear();
    }
};

extern "C" {

const char *klc_version(void) {
#define KLC_STRING2(x) #x
#define KLC_STRING(x) KLC_STRING2(x)
    return KLC_STRING(LIBCAMERA_VERSION_MAJOR) "." KLC_STRING(LIBCAMERA_VERSION_MINOR) "." KLC_STRING(LIBCAMERA_VERSION_PATCH);
}

klc_manager *klc_manager_start(klc_error *error) {
    clear(error);
    SharedManager &instance = shared();
    std::lock_guard<std::mutex> guard(instance.lock);
    if (!instance.manager) {
        // libcamera logs every INFO line to stderr by default; keep warnings and errors
        // unless the user asked for more with LIBCAMERA_LOG_LEVELS.
        if (!getenv("LIBCAMERA_LOG_LEVELS")) setenv("LIBCAMERA_LOG_LEVELS", "*:WARN", 0);
        auto manager = std::make_unique<CameraManager>();
        int result = manager->start();
        if (result < 0) {
            fail(error, KLC_SYSTEM, -result, "libcamera's camera manager did not start: %s", strerror(-result));
            return nullptr;
        }
        instance.manager = std::move(manager);
    }
    instance.users += 1;
    auto handle = new klc_manager;
    handle->manager = instance.manager.get();
    return handle;
}

void klc_manager_stop(klc_manager *manager) {
    if (!manager) return;
    delete manager;
    SharedManager &instance = shared();
    std::lock_guard<std::mutex> guard(instance.lock);
    instance.users -= 1;
    if (instance.users == 0 && instance.manager) {
        instance.manager->stop();
        instance.manager.reset();
    }
}

int klc_manager_camera_count(klc_manager *manager) {
    if (!manager) return 0;
    return static_cast<int>(manager->manager->cameras().size());
}

int klc_manager_camera_id(klc_manager *manager, int index, char *id, size_t capacity) {
    if (!manager) return -1;
    auto cameras = manager->manager->cameras();
    if (index < 0 || static_cast<size_t>(index) >= cameras.size()) return -1;
    copy(cameras[index]->id(), id, capacity);
    return 0;
}

klc_camera *klc_camera_get(klc_manager *manager, const char *id, klc_error *error) {
    clear(error);
    if (!manager) {
        fail(error, KLC_SYSTEM, 0, "no camera manager");
        return nullptr;
    }
    std::shared_ptr<Camera> camera;
    if (id && *id) {
        camera = manager->manager->get(id);
    } else {
        auto cameras = manager->manager->cameras();
        if (!cameras.empty()) camera = cameras.front();
    }
    if (!camera) {
        if (id && *id) {
            fail(error, KLC_NOT_FOUND, ENODEV, "libcamera lists no camera with id '%s'", id);
        } else {
            fail(error, KLC_NOT_FOUND, ENODEV, "libcamera lists no camera");
        }
        return nullptr;
    }
    int eventFD = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (eventFD < 0) {
        fail(error, KLC_SYSTEM, errno, "eventfd: %s", strerror(errno));
        return nullptr;
    }
    auto handle = new klc_camera;
    handle->owner = manager;
    handle->camera = camera;
    handle->eventFD = eventFD;
    handle->camera->disconnected.connect(handle, &klc_camera::cameraDisconnected);
    handle->camera->requestCompleted.connect(handle, &klc_camera::requestCompleted);
    return handle;
}

void klc_camera_close(klc_camera *camera) {
    if (!camera) return;
    // Still running inside libcamera, and completing into this handle: kept, whole.
    if (camera->abandoned) return;
    klc_camera_stop(camera);
    camera->camera->requestCompleted.disconnect(camera);
    camera->camera->disconnected.disconnect(camera);
    camera->requests.clear();
    camera->unmapAll();
    if (camera->allocator && camera->stream) camera->allocator->free(camera->stream);
    camera->allocator.reset();
    if (camera->acquired) camera->camera->release();
    camera->camera.reset();
    close(camera->eventFD);
    delete camera;
}

void klc_camera_id(klc_camera *camera, char *id, size_t capacity) {
    if (camera) copy(camera->camera->id(), id, capacity);
}

void klc_camera_model(klc_camera *camera, char *model, size_t capacity) {
    if (!camera) return;
    const auto &properties = camera->camera->properties();
    std::optional<std::string> value = properties.get(properties::Model);
    copy(value ? *value : std::string(), model, capacity);
}

// MARK: Describing

static const StreamFormats *describedFormats(klc_camera *camera, klc_error *error) {
    if (!camera) return nullptr;
    if (!camera->described) {
        camera->described = videoConfiguration(*camera->camera);
        if (!camera->described || camera->described->empty()) {
            camera->described.reset();
            fail(error, KLC_INVALID, 0, "camera %s gives no video stream configuration", camera->camera->id().c_str());
            return nullptr;
        }
    }
    return &camera->described->at(0).formats();
}

int klc_camera_format_count(klc_camera *camera, klc_error *error) {
    clear(error);
    const StreamFormats *formats = describedFormats(camera, error);
    if (!formats) return -1;
    return static_cast<int>(formats->pixelformats().size());
}

int klc_camera_format_name(klc_camera *camera, int index, char *name, size_t capacity) {
    const StreamFormats *formats = describedFormats(camera, nullptr);
    if (!formats) return -1;
    auto list = formats->pixelformats();
    if (index < 0 || static_cast<size_t>(index) >= list.size()) return -1;
    copy(list[index].toString(), name, capacity);
    return 0;
}

int klc_camera_format_sizes(klc_camera *camera, int index, klc_size_range *sizes, int capacity) {
    const StreamFormats *formats = describedFormats(camera, nullptr);
    if (!formats) return -1;
    auto list = formats->pixelformats();
    if (index < 0 || static_cast<size_t>(index) >= list.size()) return -1;
    auto all = formats->sizes(list[index]);
    int count = 0;
    for (const Size &size : all) {
        if (count >= capacity) break;
        sizes[count] = klc_size_range{size.width, size.height, size.width, size.height, 0, 0};
        count += 1;
    }
    return count;
}

int klc_camera_format_range(klc_camera *camera, int index, klc_size_range *range) {
    const StreamFormats *formats = describedFormats(camera, nullptr);
    if (!formats || !range) return -1;
    auto list = formats->pixelformats();
    if (index < 0 || static_cast<size_t>(index) >= list.size()) return -1;
    SizeRange sizes = formats->range(list[index]);
    if (sizes.max.width == 0 || sizes.max.height == 0) return 0;
    *range = klc_size_range{sizes.min.width, sizes.min.height, sizes.max.width, sizes.max.height,
                            sizes.hStep, sizes.vStep};
    return 1;
}

// MARK: Controls

static double number(const ControlValue &value) {
    switch (value.type()) {
    case ControlTypeBool: return value.get<bool>() ? 1 : 0;
    case ControlTypeByte: return value.isArray() ? 0 : value.get<uint8_t>();
    case ControlTypeInteger32: return value.isArray() ? 0 : value.get<int32_t>();
    case ControlTypeInteger64: return value.isArray() ? 0 : static_cast<double>(value.get<int64_t>());
    case ControlTypeFloat: return value.isArray() ? 0 : value.get<float>();
    default: return 0;
    }
}

int klc_camera_control_count(klc_camera *camera) {
    return camera ? static_cast<int>(camera->camera->controls().size()) : 0;
}

int klc_camera_control(klc_camera *camera, int index, klc_control_info *info) {
    if (!camera || !info) return -1;
    const ControlInfoMap &controls = camera->camera->controls();
    if (index < 0 || static_cast<size_t>(index) >= controls.size()) return -1;
    // Sorted by name so that listings read the same every time.
    std::vector<std::pair<const ControlId *, const ControlInfo *>> sorted;
    for (const auto &entry : controls) sorted.emplace_back(entry.first, &entry.second);
    std::sort(sorted.begin(), sorted.end(),
              [](const auto &a, const auto &b) { return a.first->name() < b.first->name(); });
    const auto &[id, control] = sorted[index];
    copy(id->name(), info->name, sizeof info->name);
    switch (id->type()) {
    case ControlTypeBool: info->type = KLC_CONTROL_BOOL; break;
    case ControlTypeByte:
    case ControlTypeInteger32:
    case ControlTypeInteger64: info->type = KLC_CONTROL_INTEGER; break;
    case ControlTypeFloat: info->type = KLC_CONTROL_FLOAT; break;
    case ControlTypeRectangle: info->type = KLC_CONTROL_RECTANGLE; break;
    default: info->type = KLC_CONTROL_OTHER; break;
    }
    info->minimum = number(control->min());
    info->maximum = number(control->max());
    info->default_value = number(control->def());
    return 0;
}

int klc_camera_scaler_crop_maximum(klc_camera *camera, klc_rectangle *rectangle) {
    if (!camera || !rectangle) return 0;
    const ControlInfoMap &controls = camera->camera->controls();
    auto found = controls.find(&controls::ScalerCrop);
    if (found == controls.end()) return 0;
    const ControlValue &max = found->second.max();
    if (max.type() != ControlTypeRectangle || max.isArray()) return 0;
    Rectangle crop = max.get<Rectangle>();
    if (crop.width == 0 || crop.height == 0) return 0;
    *rectangle = klc_rectangle{crop.x, crop.y, crop.width, crop.height};
    return 1;
}

int klc_camera_set_control(klc_camera *camera, const char *name, double value, klc_error *error) {
    clear(error);
    if (!camera || !name) return -1;
    if (!std::isfinite(value)) {
        fail(error, KLC_INVALID, 0, "control %s: the value is not a finite number", name);
        return -1;
    }
    const ControlInfoMap &controls = camera->camera->controls();
    for (const auto &[id, info] : controls) {
        if (id->name() != name) continue;
        // Clamped to the camera's range where it gives one, so libcamera never sees a value it rejects.
        double minimum = number(info.min()), maximum = number(info.max());
        if (maximum > minimum) value = std::min(std::max(value, minimum), maximum);
        ControlValue control;
        switch (id->type()) {
        case ControlTypeBool: control = ControlValue(value != 0); break;
        case ControlTypeInteger32: control = ControlValue(static_cast<int32_t>(std::lround(std::min(std::max(value, -2147483648.0), 2147483647.0)))); break;
        case ControlTypeInteger64: control = ControlValue(static_cast<int64_t>(std::llround(std::min(std::max(value, -9.2e18), 9.2e18)))); break;
        case ControlTypeFloat: control = ControlValue(static_cast<float>(value)); break;
        default:
            fail(error, KLC_UNSUPPORTED, 0, "control %s is not a number or switch", name);
            return -1;
        }
        std::lock_guard<std::mutex> guard(camera->lock);
        camera->pending.set(id->id(), control);
        return 0;
    }
    fail(error, KLC_UNSUPPORTED, 0, "camera %s has no control %s", camera->camera->id().c_str(), name);
    return -1;
}

int klc_camera_set_af_window(klc_camera *camera, klc_rectangle window, klc_error *error) {
    clear(error);
    if (!camera) return -1;
    if (camera->camera->controls().find(&controls::AfWindows) == camera->camera->controls().end()) {
        fail(error, KLC_UNSUPPORTED, 0, "camera %s has no AfWindows (no autofocus regions)", camera->camera->id().c_str());
        return -1;
    }
    std::array<Rectangle, 1> windows{Rectangle(window.x, window.y, window.width, window.height)};
    std::lock_guard<std::mutex> guard(camera->lock);
    camera->pending.set(controls::AfWindows, Span<const Rectangle>(windows));
    return 0;
}

int klc_camera_set_scaler_crop(klc_camera *camera, klc_rectangle crop, klc_error *error) {
    clear(error);
    if (!camera) return -1;
    klc_rectangle maximum;
    if (!klc_camera_scaler_crop_maximum(camera, &maximum)) {
        fail(error, KLC_UNSUPPORTED, 0, "camera %s has no ScalerCrop (no digital zoom)", camera->camera->id().c_str());
        return -1;
    }
    std::lock_guard<std::mutex> guard(camera->lock);
    camera->pending.set(controls::ScalerCrop, Rectangle(crop.x, crop.y, crop.width, crop.height));
    return 0;
}

// MARK: Streaming

int klc_camera_configure(klc_camera *camera, const char *format, uint32_t width, uint32_t height,
                         uint32_t buffer_count, klc_stream_config *result, int *adjusted, klc_error *error) {
    clear(error);
    if (!camera || !format || !result) return -1;
    if (camera->running || camera->config) {
        fail(error, KLC_BUSY, EBUSY, "camera %s is already configured", camera->camera->id().c_str());
        return -1;
    }
    const std::string id = camera->camera->id();
    if (!camera->acquired) {
        int status = camera->camera->acquire();
        if (status < 0) {
            fail(error, status == -EBUSY ? KLC_BUSY : (status == -ENODEV ? KLC_DISCONNECTED : KLC_SYSTEM), -status,
                 "camera %s: acquire: %s", id.c_str(), strerror(-status));
            return -1;
        }
        camera->acquired = true;
    }
    auto config = videoConfiguration(*camera->camera);
    if (!config || config->empty()) {
        fail(error, KLC_INVALID, 0, "camera %s gives no video stream configuration", id.c_str());
        return -1;
    }
    StreamConfiguration &stream = config->at(0);
    PixelFormat asked = PixelFormat::fromString(format);
    if (!asked.isValid()) {
        fail(error, KLC_INVALID, 0, "libcamera does not know the pixel format '%s'", format);
        return -1;
    }
    stream.pixelFormat = asked;
    stream.size = Size(width, height);
    if (buffer_count > 0) stream.bufferCount = buffer_count;
    keepSensorOrientation(*config);
    CameraConfiguration::Status status = config->validate();
    // 4:2:0 video needs even sizes; a pipeline's alignment can make one odd (vimc in
    // libcamera 0.0.3 scales by 3: 640 becomes 639). Ask for one less until it is even.
    for (int attempt = 0; attempt < 4 && status != CameraConfiguration::Invalid
                          && (stream.size.width % 2 || stream.size.height % 2); ++attempt) {
        stream.size = Size(stream.size.width - stream.size.width % 2, stream.size.height - stream.size.height % 2);
        if (stream.size.width == 0 || stream.size.height == 0) break;
        if (config->validate() == CameraConfiguration::Invalid) status = CameraConfiguration::Invalid;
        else status = CameraConfiguration::Adjusted;
    }
    if (status == CameraConfiguration::Invalid) {
        fail(error, KLC_INVALID, EINVAL, "camera %s cannot deliver %s %ux%u", id.c_str(), format, width, height);
        return -1;
    }
    int configured = camera->camera->configure(config.get());
    if (configured < 0) {
        fail(error, configured == -ENODEV ? KLC_DISCONNECTED : KLC_INVALID, -configured,
             "camera %s: configure %s: %s", id.c_str(), stream.toString().c_str(), strerror(-configured));
        return -1;
    }
    if (adjusted) *adjusted = (status == CameraConfiguration::Adjusted || orientationChanged(*config)) ? 1 : 0;

    camera->stream = stream.stream();
    camera->allocator = std::make_unique<FrameBufferAllocator>(camera->camera);
    int allocated = camera->allocator->allocate(camera->stream);
    if (allocated <= 0) {
        fail(error, KLC_SYSTEM, allocated < 0 ? -allocated : ENOMEM, "camera %s: allocating buffers: %s", id.c_str(),
             allocated < 0 ? strerror(-allocated) : "none granted");
        camera->allocator.reset();
        camera->stream = nullptr;
        return -1;
    }
    // Map every buffer's planes once: frames are read in place, without a copy.
    std::map<int, size_t> mappingOfFD;
    const auto &buffers = camera->allocator->buffers(camera->stream);
    for (size_t index = 0; index < buffers.size(); ++index) {
        const FrameBuffer &buffer = *buffers[index];
        klc_camera::BufferPlanes planes;
        const uint8_t *expected = nullptr;
        for (const FrameBuffer::Plane &plane : buffer.planes()) {
            int fd = plane.fd.get();
            auto known = mappingOfFD.find(fd);
            if (known == mappingOfFD.end()) {
                off_t end = lseek(fd, 0, SEEK_END);
                size_t length = end > 0 ? static_cast<size_t>(end) : 0;
                // Without a size from the fd, the planes on it say how far it reaches.
                for (const FrameBuffer::Plane &other : buffer.planes()) {
                    if (other.fd.get() == fd) length = std::max(length, static_cast<size_t>(other.offset) + other.length);
                }
                void *address = mmap(nullptr, length, PROT_READ, MAP_SHARED, fd, 0);
                if (address == MAP_FAILED) {
                    int saved = errno;
                    fail(error, KLC_SYSTEM, saved, "camera %s: mmap of a frame buffer: %s", id.c_str(), strerror(saved));
                    camera->unmapAll();
                    camera->allocator->free(camera->stream);
                    camera->allocator.reset();
                    camera->stream = nullptr;
                    return -1;
                }
                camera->mappings.push_back(Mapping{address, length});
                known = mappingOfFD.emplace(fd, camera->mappings.size() - 1).first;
            }
            const Mapping &mapping = camera->mappings[known->second];
            if (static_cast<size_t>(plane.offset) + plane.length > mapping.length) {
                fail(error, KLC_SYSTEM, 0, "camera %s: a plane reaches past its buffer", id.c_str());
                camera->unmapAll();
                camera->allocator->free(camera->stream);
                camera->allocator.reset();
                camera->stream = nullptr;
                return -1;
            }
            const uint8_t *address = static_cast<const uint8_t *>(mapping.address) + plane.offset;
            if (expected && address != expected) planes.contiguous = false;
            expected = address + plane.length;
            planes.addresses.push_back(address);
            planes.lengths.push_back(plane.length);
        }
        camera->planes.push_back(std::move(planes));
        std::unique_ptr<Request> request = camera->camera->createRequest(index);
        if (!request || request->addBuffer(camera->stream, buffers[index].get()) < 0) {
            fail(error, KLC_SYSTEM, 0, "camera %s: could not create a request for buffer %zu", id.c_str(), index);
            camera->requests.clear();
            camera->unmapAll();
            camera->allocator->free(camera->stream);
            camera->allocator.reset();
            camera->stream = nullptr;
            return -1;
        }
        camera->requests.push_back(std::move(request));
    }

    copy(stream.pixelFormat.toString(), result->format, sizeof result->format);
    result->width = stream.size.width;
    result->height = stream.size.height;
    result->stride = stream.stride;
    result->frame_size = stream.frameSize;
    result->buffer_count = static_cast<uint32_t>(camera->requests.size());
    camera->config = std::move(config);
    return 0;
}

int klc_camera_start(klc_camera *camera, int64_t frame_duration_us, klc_error *error) {
    clear(error);
    if (!camera) return -1;
    const std::string id = camera->camera->id();
    if (!camera->config || camera->requests.empty()) {
        fail(error, KLC_INVALID, 0, "camera %s: start before configure", id.c_str());
        return -1;
    }
    if (camera->running) {
        fail(error, KLC_BUSY, EBUSY, "camera %s is already streaming", id.c_str());
        return -1;
    }
    ControlList startControls(controls::controls);
    {
        std::lock_guard<std::mutex> guard(camera->lock);
        if (frame_duration_us > 0 && camera->camera->controls().count(&controls::FrameDurationLimits)) {
            const int64_t limits[2] = {frame_duration_us, frame_duration_us};
            camera->pending.set(controls::FrameDurationLimits, Span<const int64_t, 2>(limits));
        }
        startControls = camera->pending;
        camera->pending.clear();
        camera->completed.clear();
    }
    int started = camera->camera->start(&startControls);
    if (started < 0) {
        fail(error, started == -ENODEV ? KLC_DISCONNECTED : KLC_SYSTEM, -started, "camera %s: start: %s", id.c_str(),
             strerror(-started));
        return -1;
    }
    camera->running = true;
    for (auto &request : camera->requests) {
        int queued = camera->camera->queueRequest(request.get());
        if (queued < 0) {
            fail(error, queued == -ENODEV ? KLC_DISCONNECTED : KLC_SYSTEM, -queued, "camera %s: queue a request: %s",
                 id.c_str(), strerror(-queued));
            klc_camera_stop(camera);
            return -1;
        }
    }
    return 0;
}

void klc_camera_stop(klc_camera *camera) {
    if (!camera || !camera->running) return;
    camera->running = false;
    // Stopping completes every queued request (cancelled) on this thread; none is
    // handed out after this, so the queue is emptied.
    camera->camera->stop();
    std::lock_guard<std::mutex> guard(camera->lock);
    camera->completed.clear();
}

int klc_camera_end_failed(klc_camera *camera, int wait_ms) {
    if (!camera || !camera->running) return 1;
    bool gone;
    {
        std::unique_lock<std::mutex> guard(camera->lock);
        gone = camera->changed.wait_for(guard, std::chrono::milliseconds(std::max(wait_ms, 0)),
                                        [camera] { return camera->disconnected; });
    }
    if (gone) {
        // A disconnected camera's stop() returns at once, without touching the pipeline.
        klc_camera_stop(camera);
        return 1;
    }
    // libcamera 0.0.3 asserts in stop() when the device vanished before it noticed
    // (a request stuck in the pipeline), aborting the process: leave it running, and
    // keep this handle and the shared manager alive for the rest of the process.
    camera->running = false;
    camera->abandoned = true;
    SharedManager &instance = shared();
    std::lock_guard<std::mutex> guard(instance.lock);
    instance.users += 1;
    return 0;
}

int klc_camera_event_fd(klc_camera *camera) { return camera ? camera->eventFD : -1; }

int klc_camera_dequeue(klc_camera *camera, klc_frame *frame, klc_error *error) {
    clear(error);
    if (!camera || !frame) return -1;
    Request *request = nullptr;
    bool gone = false;
    {
        std::lock_guard<std::mutex> guard(camera->lock);
        if (!camera->completed.empty()) {
            request = camera->completed.front();
            camera->completed.pop_front();
        } else {
            gone = camera->disconnected;
        }
        if (camera->completed.empty() && !camera->disconnected) {
            uint64_t count;
            while (read(camera->eventFD, &count, sizeof count) < 0 && errno == EINTR) {}
        }
    }
    if (!request) {
        if (gone) {
            fail(error, KLC_DISCONNECTED, ENODEV, "camera %s was disconnected", camera->camera->id().c_str());
            return -1;
        }
        return 0;
    }
    size_t index = static_cast<size_t>(request->cookie());
    if (index >= camera->planes.size()) {
        fail(error, KLC_SYSTEM, 0, "camera %s completed an unknown request", camera->camera->id().c_str());
        return -1;
    }
    memset(frame, 0, sizeof *frame);
    frame->index = static_cast<int>(index);
    FrameBuffer *buffer = request->findBuffer(camera->stream);
    if (request->status() == Request::RequestCancelled || !buffer) {
        frame->status = 2;
        return 1;
    }
    const FrameMetadata &metadata = buffer->metadata();
    frame->status = metadata.status == FrameMetadata::FrameSuccess ? 0 : (metadata.status == FrameMetadata::FrameCancelled ? 2 : 1);
    frame->sequence = metadata.sequence;
    frame->timestamp_ns = metadata.timestamp;
    const auto &planes = camera->planes[index];
    frame->plane_count = static_cast<int>(std::min<size_t>(planes.addresses.size(), KLC_MAX_PLANES));
    frame->contiguous = planes.contiguous ? 1 : 0;
    auto used = metadata.planes();
    for (int plane = 0; plane < frame->plane_count; ++plane) {
        frame->planes[plane] = planes.addresses[plane];
        frame->plane_length[plane] = planes.lengths[plane];
        frame->bytes_used[plane] = static_cast<size_t>(plane) < used.size()
            ? std::min(used[plane].bytesused, planes.lengths[plane]) : planes.lengths[plane];
    }
    return 1;
}

int klc_camera_requeue(klc_camera *camera, int index, klc_error *error) {
    clear(error);
    if (!camera) return -1;
    if (!camera->running) return 0;
    if (index < 0 || static_cast<size_t>(index) >= camera->requests.size()) {
        fail(error, KLC_INVALID, EINVAL, "no buffer %d", index);
        return -1;
    }
    Request *request = camera->requests[index].get();
    request->reuse(Request::ReuseBuffers);
    {
        std::lock_guard<std::mutex> guard(camera->lock);
        if (!camera->pending.empty()) {
            request->controls().merge(camera->pending);
            camera->pending.clear();
        }
    }
    int queued = camera->camera->queueRequest(request);
    if (queued < 0) {
        fail(error, queued == -ENODEV ? KLC_DISCONNECTED : KLC_SYSTEM, -queued, "camera %s: queue a request: %s",
             camera->camera->id().c_str(), strerror(-queued));
        return -1;
    }
    return 0;
}

} // extern "C"
