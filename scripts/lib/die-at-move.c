/* scripts/torture's aimed kill: LD_PRELOADed into `kioskcam run`, it SIGKILLs the
   process at the one moment a timed kill cannot hit, inside a move into the library:
   after link() gave the recording its library name and before unlink() removes the
   temp name. Armed only while the file named by KIOSKCAM_TORTURE_ARM exists, so the
   harness chooses the move (the recorder's at a segment cut, or start-up salvage's). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int unlink(const char *path) {
    static int (*real_unlink)(const char *);
    if (!real_unlink) real_unlink = (int (*)(const char *))dlsym(RTLD_NEXT, "unlink");
    const char *arm = getenv("KIOSKCAM_TORTURE_ARM");
    size_t length = strlen(path);
    struct stat info;
    if (arm && access(arm, F_OK) == 0 && length > 5 && strcmp(path + length - 5, ".part") == 0
        && stat(path, &info) == 0 && info.st_nlink > 1)
        kill(getpid(), SIGKILL);
    return real_unlink(path);
}
