# find_package(tunefuzz CONFIG): tunefuzz::runtime (the runtime library, where tunefuzz is installed) and
# tunefuzz::tables (tuned tables: those tunefuzz ships, or a `tune export --format cmake` package installed
# into the same prefix over them). tunefuzz and exported table packages install this very file, so either may
# be installed first. tests/test_export.cpp checks that the two copies are the same.
include(CMakeFindDependencyMacro)
file(GLOB _tunefuzz_target_files "${CMAKE_CURRENT_LIST_DIR}/tunefuzz*Targets.cmake")
foreach(_tunefuzz_file IN LISTS _tunefuzz_target_files)
  if(_tunefuzz_file MATCHES "RuntimeTargets\\.cmake$")
    find_dependency(CUDAToolkit)  # the runtime's interface: the CUDA driver and the toolkit's headers
  endif()
  include("${_tunefuzz_file}")
endforeach()
