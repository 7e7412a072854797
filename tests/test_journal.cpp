// Laws of the campaign journal: what was recorded is read back on resume; a line cut short by a kill is
// ignored, any other damaged line is an error naming file, line and field; a journal belongs to one config;
// started-but-unfinished steps are reported as interrupted, with how many campaigns in a row died on them.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "tuner/campaign/journal.hpp"
#include "tuner/common/error.hpp"
#include "tuner/worker/protocol.hpp"

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
    fuzzed["result"]["passed"] = true;
    fuzzed["result"]["cases_run"] = 3;
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
  EXPECT_EQ(j.interrupted_fuzz(), (std::map<std::string, int>{{"cand/2", 1}}));
  EXPECT_EQ(j.interrupted_time(), (std::map<std::string, int>{{"p1", 1}}));
  EXPECT_FALSE(j.timed("p1").has_value());
}

// A timing taken from the verdict store is journalled as the store's file holds it, in block style: it still
// takes one line, and the journal resumes (it did not: "damaged journal line" on the next --resume).
TEST_F(JournalTest, AnEventReadFromABlockStyleFileTakesOneLine) {
  TimeResult timing;
  timing.baseline.id = "cublas";
  timing.baseline.status = "timed";
  timing.entries.push_back({});
  timing.entries.back().id = "a";
  timing.entries.back().status = "timed";
  YAML::Node timed;
  timed["event"] = "timed";
  timed["problem"] = "p1";
  timed["timing"] = to_yaml(timing);
  const YAML::Node stored = YAML::Load(YAML::Dump(timed));  // as a store entry is read: block style
  ASSERT_NE(YAML::Dump(stored).find('\n'), std::string::npos);
  {
    Journal j = Journal::create(path_, "abc");
    j.record(stored);
    j.record(event("time_started", "problem", "p2"));
  }
  std::ifstream in(path_);
  int lines = 0;
  for (std::string line; std::getline(in, line);) ++lines;
  EXPECT_EQ(lines, 3) << "the campaign line, the timing, the start";
  const Journal j = Journal::resume(path_, "abc");
  ASSERT_TRUE(j.timed("p1").has_value());
  EXPECT_EQ((*j.timed("p1"))["timing"]["entries"][0]["id"].as<std::string>(), "a");
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
  EXPECT_EQ(j.interrupted_fuzz(), (std::map<std::string, int>{{"cand/1", 1}}));
}

// A config that changed since (a problem added) resumes: its journal gains a campaign line with the new
// hash, and what it recorded before is still found. A journal that does not exist is nothing to resume.
TEST_F(JournalTest, AJournalOfAChangedConfigResumesWithANewCampaignLine) {
  {
    Journal j = Journal::create(path_, "abc");
    j.record(event("fuzz_started", "id", "cand/1"));
  }
  const Journal j = Journal::resume(path_, "other");
  EXPECT_EQ(j.interrupted_fuzz(), (std::map<std::string, int>{{"cand/1", 1}}));
  std::ifstream in(path_);
  std::string line, last;
  while (std::getline(in, line)) last = line;
  EXPECT_NE(last.find("other"), std::string::npos) << last;
  try {
    Journal::resume(path_.parent_path() / "missing.journal", "abc");
    FAIL() << "resumed a journal that does not exist";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::bad_input);
  }
}

// A kill's cut-short last line is dropped from the file on resuming, so what the resumed campaign appends
// starts a line of its own and the journal can be resumed again.
TEST_F(JournalTest, AResumedJournalWithACutShortLineResumesAgain) {
  {
    Journal j = Journal::create(path_, "abc");
    j.record(event("fuzz_started", "id", "cand/1"));
  }
  std::ofstream(path_, std::ios::app) << "{event: fuzzed, id: \"cand/1\", result: {pas";
  Journal::resume(path_, "abc").record(event("fuzz_started", "id", "cand/2"));
  EXPECT_EQ(Journal::resume(path_, "abc").interrupted_fuzz(),
            (std::map<std::string, int>{{"cand/1", 1}, {"cand/2", 1}}));
}

// A verdict is found under the key it was filed under (`fuzz run` files one per candidate and round, each
// round's seed in its key); a journal written before verdicts carried keys answers any key.
TEST_F(JournalTest, VerdictsAreFoundUnderTheirKey) {
  {
    Journal j = Journal::create(path_, "abc");
    for (const char* key : {"round-0", "round-1"}) {
      YAML::Node fuzzed = event("fuzzed", "id", "cand/1");
      fuzzed["key"] = key;
      fuzzed["seed"] = std::string(key) == "round-0" ? 10 : 11;
      fuzzed["result"]["passed"] = true;
      fuzzed["result"]["cases_run"] = 3;
      j.record(fuzzed);
    }
    YAML::Node old = event("fuzzed", "id", "cand/2");
    old["seed"] = 5;
    old["result"]["passed"] = true;
    old["result"]["cases_run"] = 1;
    j.record(old);
  }
  const Journal j = Journal::resume(path_, "abc");
  EXPECT_EQ((*j.fuzzed("cand/1", "round-0"))["seed"].as<int>(), 10);
  EXPECT_EQ((*j.fuzzed("cand/1", "round-1"))["seed"].as<int>(), 11);
  EXPECT_FALSE(j.fuzzed("cand/1", "round-2").has_value());
  EXPECT_EQ((*j.fuzzed("cand/1"))["seed"].as<int>(), 11) << "without a key: the last";
  EXPECT_EQ((*j.fuzzed("cand/2", "any"))["seed"].as<int>(), 5);
  EXPECT_EQ(j.line_of(3), 4) << "the campaign line, then the three verdicts";
}

TEST_F(JournalTest, QuarantinesAreRemembered) {
  {
    Journal j = Journal::create(path_, "abc");
    j.record(event("quarantined", "id", "cand/9"));
  }
  EXPECT_EQ(Journal::resume(path_, "abc").quarantined(), std::set<std::string>{"cand/9"});
}

// A campaign that died twice while the same candidate ran counts it twice; a verdict clears the count.
TEST_F(JournalTest, InterruptionsInARowAreCounted) {
  {
    Journal j = Journal::create(path_, "abc");
    j.record(event("fuzz_started", "id", "cand/1"));  // the campaign died here
    j.record(event("fuzz_started", "id", "cand/1"));  // and here again, after a resume
    j.record(event("fuzz_started", "id", "cand/2"));
  }
  EXPECT_EQ(Journal::resume(path_, "abc").interrupted_fuzz(),
            (std::map<std::string, int>{{"cand/1", 2}, {"cand/2", 1}}));
}

// Damage that is not a kill's cut-short last line is an error naming the file, the line and the field, never
// a yaml-cpp conversion error or "written for a different config".
TEST_F(JournalTest, ADamagedJournalIsAnErrorNamingFileLineAndField) {
  const auto error_of = [&](const std::string& text) -> std::string {
    fs::create_directories(path_.parent_path());
    std::ofstream(path_, std::ios::trunc) << text;
    try {
      Journal::resume(path_, "abc");
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::bad_input) << e.what();
      return e.what();
    }
    return "(no error)";
  };
  const std::string head = "{event: campaign, config_sha256: \"abc\"}\n";
  EXPECT_EQ(error_of(head + "{event: fuzzed, id: \"c/1\", seed: 1, result: {passed: maybe, cases_run: 1}}\n" +
                     "{event: fuzz_started, id: \"c/2\"}\n"),
            path_.string() + ":2: result.passed: damaged journal line: field 'passed' has the wrong type");
  EXPECT_NE(error_of(head + "{event: fuzzed, id: [1], seed: 1}\n").find(path_.string() + ":2: id:"),
            std::string::npos);
  EXPECT_NE(error_of(head + "{event: fuzzed, id: \"c/1\", seed: -1, result: {passed: true, cases_run: 1}}\n")
                .find(path_.string() + ":2: result: damaged journal line"),
            std::string::npos);
  EXPECT_NE(error_of(head + "{event: fuzz_st\n{event: fuzz_started, id: \"c/2\"}\n")
                .find(path_.string() + ":2"),
            std::string::npos);
  const std::string next = "{event: fuzz_started, id: \"c/3\"}\n";  // so the damaged line is not the last
  EXPECT_EQ(error_of(head + "{event: fuzz_call, call: 1, compile_seconds: soon}\n" + next),
            path_.string() + ":2: compile_seconds: damaged journal line: expected a number of at least 0");
  EXPECT_EQ(error_of(head + "{event: fuzz_call_end, call: 1}\n" + next),
            path_.string() + ":2: seconds: damaged journal line: missing");
  EXPECT_EQ(error_of(head + "{event: fuzz_started, id: \"c/2\", call_seconds: -1}\n" + next),
            path_.string() + ":2: call_seconds: damaged journal line: expected a number of at least 0");
  EXPECT_NE(error_of("").find("no campaign line"), std::string::npos);
  EXPECT_NE(error_of("{event: fuzz_started, id: \"c/2\"}\n").find("no campaign line"), std::string::npos);
  fs::remove(path_);
  fs::create_directories(path_);
  try {
    Journal::resume(path_, "abc");
    FAIL() << "resumed from a directory";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::bad_input);
    EXPECT_NE(std::string(e.what()).find("it is a directory"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tunefuzz
