# All dependencies come from Debian packages (setup.sh installs them) or the CUDA toolkit.
# CUDA is looked for under CUDA_HOME, then /usr/local/cuda.
if(NOT CUDAToolkit_ROOT)
  if(DEFINED ENV{CUDA_HOME})
    set(CUDAToolkit_ROOT $ENV{CUDA_HOME})
  elseif(EXISTS /usr/local/cuda)
    set(CUDAToolkit_ROOT /usr/local/cuda)
  endif()
endif()
find_package(CUDAToolkit 12.0)
if(NOT CUDAToolkit_FOUND)
  message(FATAL_ERROR
    "tunefuzz needs the CUDA toolkit (NVRTC, driver API headers, cuBLAS). None was found: install it under "
    "/usr/local/cuda or point CUDA_HOME at it (looked in: '${CUDAToolkit_ROOT}').")
endif()

find_package(Threads REQUIRED)
find_package(yaml-cpp REQUIRED)
find_package(Eigen3 3.3 REQUIRED NO_MODULE)
find_package(Boost 1.74 REQUIRED)  # header-only: Boost.Random's portable distributions
find_package(rapidcheck REQUIRED)
find_package(CLI11 REQUIRED)
find_package(OpenSSL REQUIRED)  # SHA-256 for cache keys and source hashes
if(TUNEFUZZ_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()

# HIP (optional): ROCm's hiprtc and the HIP runtime, from Debian's hipcc and libamdhip64-dev (setup.sh installs
# them) or a ROCm install under $ROCM_PATH or /opt/rocm. With them, `gfx*` targets compile with hiprtc and the
# HIP launcher library and tools are built; without them, tunefuzz is built for NVIDIA alone and refuses a
# `gfx*` config with a clear message. Two imported targets:
#   tunefuzz::hiprtc    hiprtc and comgr (the code-object manager it compiles through), for the tuner: in
#                       ROCm 5.2 hiprtc lives inside libamdhip64, later releases ship libhiprtc on its own
#   tunefuzz::hip       the HIP runtime (libamdhip64), for the launcher side only
option(TUNEFUZZ_HIP "Build the HIP backend (hiprtc compiler, HIP launcher) when ROCm's HIP is found" ON)
set(TUNEFUZZ_HAVE_HIP OFF)
if(TUNEFUZZ_HIP)
  set(_tunefuzz_rocm_hints $ENV{ROCM_PATH} /opt/rocm)
  find_path(TUNEFUZZ_HIPRTC_INCLUDE_DIR hip/hiprtc.h HINTS ${_tunefuzz_rocm_hints} PATH_SUFFIXES include)
  find_path(TUNEFUZZ_COMGR_INCLUDE_DIR amd_comgr.h HINTS ${_tunefuzz_rocm_hints}
            PATH_SUFFIXES include include/amd_comgr)
  find_library(TUNEFUZZ_AMDHIP64_LIBRARY amdhip64 HINTS ${_tunefuzz_rocm_hints} PATH_SUFFIXES lib)
  find_library(TUNEFUZZ_HIPRTC_LIBRARY hiprtc HINTS ${_tunefuzz_rocm_hints} PATH_SUFFIXES lib)
  find_library(TUNEFUZZ_COMGR_LIBRARY amd_comgr HINTS ${_tunefuzz_rocm_hints} PATH_SUFFIXES lib)
  if(TUNEFUZZ_HIPRTC_INCLUDE_DIR AND TUNEFUZZ_COMGR_INCLUDE_DIR AND TUNEFUZZ_AMDHIP64_LIBRARY
     AND TUNEFUZZ_COMGR_LIBRARY)
    set(TUNEFUZZ_HAVE_HIP ON)
    set(_tunefuzz_hiprtc_library ${TUNEFUZZ_HIPRTC_LIBRARY})
    if(NOT TUNEFUZZ_HIPRTC_LIBRARY)
      set(_tunefuzz_hiprtc_library ${TUNEFUZZ_AMDHIP64_LIBRARY})
    endif()
    add_library(tunefuzz::hiprtc INTERFACE IMPORTED)
    target_include_directories(tunefuzz::hiprtc INTERFACE ${TUNEFUZZ_HIPRTC_INCLUDE_DIR} ${TUNEFUZZ_COMGR_INCLUDE_DIR})
    target_compile_definitions(tunefuzz::hiprtc INTERFACE __HIP_PLATFORM_AMD__)
    target_link_libraries(tunefuzz::hiprtc INTERFACE ${_tunefuzz_hiprtc_library} ${TUNEFUZZ_COMGR_LIBRARY})
    add_library(tunefuzz::hip INTERFACE IMPORTED)
    target_link_libraries(tunefuzz::hip INTERFACE tunefuzz::hiprtc ${TUNEFUZZ_AMDHIP64_LIBRARY})
    message(STATUS "tunefuzz: HIP backend on (hiprtc: ${_tunefuzz_hiprtc_library}, comgr: ${TUNEFUZZ_COMGR_LIBRARY})")
  else()
    message(STATUS "tunefuzz: ROCm's hiprtc was not found: building without the HIP backend (gfx* targets are refused)")
  endif()
endif()
