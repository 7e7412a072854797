// Laws of the campaign journal: what was recorded is read back on resume; a line cut short by a kill is
// ignored; a journal belongs to one config; started-but-unfinished steps are reported as interrupted.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "tuner/campaign/journal.hpp"
#include "tuner/common/error.hpp"

namespace tunefuzz {
namespace {

namespace fs = std::filesystem;

class JournalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = fs::temp_directory_path() /
            ("tunefuzz-journal-" + std::to_string(getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name()) /
            "table.journal";
    fs::remove_all(path_.parent_path());
  }
  void TearDown() override { fs::remove_all(path_.parent_path()); }

  static YAML::Node event(const char* kind, const char* key, const std::string& value) {
    YAML::Node e;
    e["event"] = kind;
    e[key] = value;
    return e;
  }

  fs::path path_;
};

TEST_F(JournalTest, RecordedStepsAreReadBackOnResume) {
  {
    Journal j = Journal::create(path_, "abc");
    YAML::Node fuzzed = event("fuzzed", "id", "cand/1");
    fuzzed["seed"] = 42;
    fuzzed["result"]["message"] = "a \"quoted\"\nmulti-line: message";  // stays one line in the file
    j.record(event("fuzz_started", "id", "cand/1"));
    j.record(fuzzed);
    j.record(event("fuzz_started", "id", "cand/2"));  // never finished
    j.record(event("time_started", "problem", "p1"));
  }
  const Journal j = Journal::resume(path_, "abc");
  ASSERT_TRUE(j.fuzzed("cand/1").has_value());
  EXPECT_EQ((*j.fuzzed("cand/1"))["seed"].as<int>(), 42);
  EXPECT_EQ((*j.fuzzed("cand/1"))["result"]["message"].as<std::string>(),
            "a \"quoted\"\nmulti-line: message");
  EXPECT_FALSE(j.fuzzed("cand/2").has_value());
  EXPECT_EQ(j.interrupted_fuzz(), std::set<std::string>{"cand/2"});
  EXPECT_EQ(j.interrupted_time(), std::set<std::string>{"p1"});
  EXPECT_FALSE(j.timed("p1").has_value());
}

TEST_F(JournalTest, ALineCutShortByAKillIsIgnored) {
  {
    Journal j = Journal::create(path_, "abc");
    j.record(event("fuzz_started", "id", "cand/1"));
  }
  std::ofstream(path_, std::ios::app)
      << "{event: fuzzed, id: \"cand/1\", result: {pas";  // the kill came here
  const Journal j = Journal::resume(path_, "abc");
  EXPECT_FALSE(j.fuzzed("cand/1").has_value());
  EXPECT_EQ(j.interrupted_fuzz(), std::set<std::string>{"cand/1"});
}

TEST_F(JournalTest, AJournalBelongsToOneConfig) {
  Journal::create(path_, "abc");
  try {
    Journal::resume(path_, "other");
    FAIL() << "resumed a journal written for another config";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::bad_input);
  }
  try {
    Journal::resume(path_.parent_path() / "missing.journal", "abc");
    FAIL() << "resumed a journal that does not exist";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::bad_input);
  }
}

TEST_F(JournalTest, QuarantinesAreRemembered) {
  {
    Journal j = Journal::create(path_, "abc");
    j.record(event("quarantined", "id", "cand/9"));
  }
  EXPECT_EQ(Journal::resume(path_, "abc").quarantined(), std::set<std::string>{"cand/9"});
}

}  // namespace
}  // namespace tunefuzz
