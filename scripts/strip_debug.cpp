// An image without its debug sections, as `tune export --embed-kernels` ships it (runtime/backend/elf_image.hpp):
// the input to scripts/load_probe.cpp's comparison of module loads (`scripts/device/camp.sh loadab`). Not part
// of the build; from the repository root, on a machine with the build's dependencies:
//   g++ -O2 -std=c++20 -I. -Iruntime/include scripts/strip_debug.cpp runtime/backend/elf_image.cpp \
//       tuner/common/hash.cpp tuner/common/error.cpp -lcrypto -o strip_debug
// Usage: strip_debug IMAGE OUT   (exit 1, writing nothing, when the image cannot be stripped safely)
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

#include "runtime/backend/elf_image.hpp"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: strip_debug IMAGE OUT\n");
    return 2;
  }
  std::ifstream in(argv[1], std::ios::binary);
  const std::string image((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto stripped = tunefuzz::without_debug_sections(image);
  if (!stripped) {
    std::fprintf(stderr, "strip_debug: %s: not an ELF64 image with debug sections that can be removed safely\n",
                 argv[1]);
    return 1;
  }
  std::ofstream(argv[2], std::ios::binary) << *stripped;
  std::printf("%zu -> %zu bytes\n", image.size(), stripped->size());
  return 0;
}
