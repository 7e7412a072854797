// The timer's L2 flush reads its buffer back with a PTX kernel the driver assembles at run time
// (tuner/device/l2_clean_ptx.hpp). A GPU is not needed to know that the text assembles: the toolkit's ptxas
// takes it for the oldest target it names and for the cards the tuner times on.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "tuner/device/l2_clean_ptx.hpp"

namespace {

namespace fs = std::filesystem;

class L2CleanPtx : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(TUNEFUZZ_PTXAS)) GTEST_SKIP() << "no ptxas at " << TUNEFUZZ_PTXAS << " (CUDA toolkit)";
    dir_ = fs::temp_directory_path() / ("tf-l2-clean-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }
  // ptxas's exit status on `text` for `arch`.
  int assemble(const std::string& text, const std::string& arch) {
    const fs::path ptx = dir_ / "clean.ptx";
    std::ofstream(ptx) << text;
    const std::string command = std::string(TUNEFUZZ_PTXAS) + " -arch=" + arch + " " + ptx.string() + " -o " +
                                (dir_ / "clean.cubin").string() + " 2> " + (dir_ / "err.txt").string();
    return std::system(command.c_str());
  }
  fs::path dir_;
};

TEST_F(L2CleanPtx, AssemblesForEveryCardTheTunerTimesOn) {
  for (const std::string arch : {"sm_75", "sm_80", "sm_89", "sm_90"})
    EXPECT_EQ(assemble(tunefuzz::device::kL2CleanPtx, arch), 0) << arch;
}

TEST_F(L2CleanPtx, NamesTheEntryTheTimerLaunches) {
  const std::string text = tunefuzz::device::kL2CleanPtx;
  EXPECT_NE(text.find(".visible .entry " + std::string(tunefuzz::device::kL2CleanEntry) + "("),
            std::string::npos);
}

TEST_F(L2CleanPtx, AWrongTextIsRefused) {
  // The check above can fail: the same text with one register left undeclared does not assemble.
  std::string broken = tunefuzz::device::kL2CleanPtx;
  const std::string declaration = ".reg .b64   %rd<10>;";
  ASSERT_NE(broken.find(declaration), std::string::npos);
  broken.replace(broken.find(declaration), declaration.size(), ".reg .b64   %rd<9>;");
  EXPECT_NE(assemble(broken, "sm_90"), 0);
}

}  // namespace
