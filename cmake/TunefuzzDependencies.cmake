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
