// Schedule perturbation, for fuzzing only. Built with TF_PERTURB set to a non-zero seed, tf_perturb(site,
// step) makes some warps wait a pseudo-random while at the points where data changes hands (before barrier
// arrivals and waits, between writing a staging buffer and issuing the copy that reads it, around async-copy
// commits and waits, before a persistent scheduler's advance). A missing barrier or fence whose race window
// the hardware's usual timing keeps shut then loses the race in ordinary fuzz cases. The delay depends on
// the seed, the CTA, the warp, the call site and the caller's step (a loop counter), never on lanes, so a
// warp waits as one; about one call in four waits, up to about 4 µs (an async copy lands in about one).
// tf_perturb_far waits longer and more often, before hand-offs between CTAs. A perturbed image is fuzzed,
// never timed.
#ifndef TUNEFUZZ_PERTURB_H
#define TUNEFUZZ_PERTURB_H

#include "tunefuzz_rtc.h"

#ifndef TF_PERTURB
#define TF_PERTURB 0  // non-zero: the seed of small delays at hand-off points (fuzz images only); 0 = none
#endif

#if TF_PERTURB && TF_DEVICE_CODE
__device__ __forceinline__ tf_u32 tf_perturb_mix(tf_u32 x) {
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  x *= 0x846ca68bu;
  x ^= x >> 16;
  return x;
}

// The hash deciding this warp's wait at a call: `site` names the call (a number of its own in its file, written
// at the call: not __LINE__, which a line added above would move, changing every perturbed image's schedule;
// NVRTC has no __COUNTER__), `step` the iteration the caller is in (K tile, output tile), `salt` the kind of
// wait. A new call takes a number its file does not use yet.
__device__ __forceinline__ tf_u32 tf_perturb_hash(tf_u32 site, tf_u32 step, tf_u32 salt) {
  const tf_u32 warp = threadIdx.x / 32u;
  return tf_perturb_mix(static_cast<tf_u32>(TF_PERTURB) ^
                        tf_perturb_mix(blockIdx.x * 0x9e3779b9u ^ warp * 0x85ebca6bu ^ site * 0xc2b2ae35u ^
                                       step * 0x27d4eb2fu ^ salt));
}

__device__ __forceinline__ void tf_perturb_sleep(tf_u32 nanoseconds) {
#if defined(__HIPCC__) || defined(__HIPCC_RTC__)
  for (tf_u32 i = 0; i < nanoseconds / 64u; ++i) __builtin_amdgcn_s_sleep(1);  // ~64 cycles each
#else
  __nanosleep(nanoseconds);
#endif
}

__device__ __forceinline__ void tf_perturb(tf_u32 site, tf_u32 step) {
  const tf_u32 h = tf_perturb_hash(site, step, 0);
  if ((h & 3u) == 0) tf_perturb_sleep(h >> 20);  // one call in four, 0 .. 4095 ns
}

// Before a hand-off to *another CTA* (a split's partial, read by whichever CTA arrives last): CTAs of one
// launch drift apart by microseconds, so a window between them stays shut under tf_perturb's short waits.
// Here about one call in two waits, up to about 32 µs (a fuzz case's split-K tile runs for tens of µs).
__device__ __forceinline__ void tf_perturb_far(tf_u32 site, tf_u32 step) {
  const tf_u32 h = tf_perturb_hash(site, step, 0x1b873593u);
  if ((h & 1u) == 0) tf_perturb_sleep(h >> 17);  // 0 .. 32767 ns
}
#else
#define tf_perturb(site, step) ((void)0)
#define tf_perturb_far(site, step) ((void)0)
#endif

#endif  // TUNEFUZZ_PERTURB_H
