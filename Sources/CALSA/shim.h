#ifndef KIOSKCAM_CALSA_SHIM_H
#define KIOSKCAM_CALSA_SHIM_H
#include <errno.h>
#include <poll.h>
#include <alsa/asoundlib.h>

static inline int kc_snd_pcm_nonblock(void) { return SND_PCM_NONBLOCK; }
/* snd_pcm_hw_params_alloca is a macro around alloca; Swift uses malloc/free instead. */
static inline int kc_snd_pcm_hw_params_malloc(snd_pcm_hw_params_t **p) { return snd_pcm_hw_params_malloc(p); }
static inline int kc_snd_pcm_sw_params_malloc(snd_pcm_sw_params_t **p) { return snd_pcm_sw_params_malloc(p); }
#endif
