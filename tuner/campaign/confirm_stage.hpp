// Fuzz budget by stage (`budgets.fuzz_screen_cases`): every compiled candidate is screened with a few cases
// before timing; a problem's winner gets the full budget, on cases of its own, before it enters a table. A
// failure there demotes it (status `fuzz`) and the problem's next timed candidate is confirmed the same way,
// until each problem's winner passed or it has none. Only then are schedule-perturbed twins needed: a
// screened campaign compiles them for the winners alone (on an H200 the twins of all 454 candidates of the
// shipped config took 260 of a cold campaign's 412 s of compiling).
#pragma once

#include <algorithm>
#include <filesystem>
#include <functional>
#include <future>
#include <mutex>
#include <semaphore>
#include <set>
#include <string>
#include <vector>

#include "tuner/campaign/stages.hpp"

namespace tunefuzz {

/// Whether `config` screens its fuzz budget: budgets.fuzz_screen_cases set and below fuzz_cases.
bool fuzz_is_screened(const Config& config);

/// Compiles the schedule-perturbed twins of `candidates` (returning each with its image and its twin's).
using TwinCompiler = std::function<std::vector<CompiledCandidate>(const std::vector<Candidate>&)>;

/// A check of each problem's winner that demotes the winners it fails (confirm_winners, sanitize_winners).
using WinnerCheck = std::function<void(std::vector<ProblemTiming>&, std::vector<FuzzedCandidate>&)>;

/// The checks before a winner enters a table, `confirm` (the full fuzz budget; empty: none, the winners count
/// as confirmed) and `sanitize` (empty: none), run at the same time: `sanitize` on copies of `timings` and
/// `fuzzed` (it needs only the winners' own images), `confirm` on them, then the sanitizers' demotions and
/// the tools passed (ProblemTiming::sanitizers) are folded in. A winner either check demoted leaves its
/// problem to a successor the other has not seen, so both run again until every problem's winner passed both
/// (a winner checked before is checked again, from the verdict store when there is one).
void check_winners(std::vector<ProblemTiming>& timings, std::vector<FuzzedCandidate>& fuzzed,
                   const WinnerCheck& confirm, const WinnerCheck& sanitize);

/// Compiles winners' twins while the time stage goes on, each as soon as its problem is decided, so that the
/// confirmation finds them in the kernel cache (`compile` must store there) instead of waiting for the
/// compiler after the last problem (8.5 s of a four-GPU campaign's 96 at 3648a8c). Its results are dropped:
/// a twin that does not compile fails again, and is reported, at the confirmation.
class TwinPrefetch {
 public:
  /// At most `at_once` twins compile at a time (each on one thread), so the prefetch leaves cores to the time
  /// stage's host work, the checks of its outputs.
  explicit TwinPrefetch(TwinCompiler compile, unsigned at_once = 8)
      : compile_(std::move(compile)), slots_(std::max(1u, at_once)) {}
  TwinPrefetch(const TwinPrefetch&) = delete;
  TwinPrefetch& operator=(const TwinPrefetch&) = delete;
  ~TwinPrefetch() { wait(); }
  /// Starts compiling `candidate`'s twin unless it was asked for before; safe from several threads, and
  /// throws nothing (it runs on the time stage's threads): what it cannot start, the confirmation compiles.
  void add(const Candidate& candidate) noexcept;
  /// Returns once every twin asked for is compiled (or failed).
  void wait();

 private:
  TwinCompiler compile_;
  std::mutex mutex_;
  std::set<std::string> asked_;
  std::vector<std::future<void>> running_;
  std::counting_semaphore<> slots_;
};

/// The winners' ids of the results table at `table`, when one is there and reads; none otherwise. A campaign
/// prefetches the twins of the table it is to replace (a run again after a template changed), which is only a
/// hint of what is likely to win, and is overwritten at the campaign's end.
std::vector<std::string> table_winners(const std::filesystem::path& table);

/// The seed of the confirmation's cases: another stream than the screen's, so the winner's full budget is new
/// cases, not the screened ones again.
uint64_t confirmation_seed(uint64_t campaign_seed);

/// Confirms each problem's winner in `timings` with `full` (its cases, seed, journal and store; a candidate
/// that wins several problems is fuzzed once), demoting a winner that fails (status `fuzz`, its failure as the
/// message) until every winner is confirmed or a problem has none. Each confirmation is folded into the
/// candidate's entry of `fuzzed` (cases, perturbed cases, coverage; a failure makes the entry failed), and its
/// `confirmed` flag set, so a later call confirms only new winners. A winner compiled without its twin gets
/// one from `twins` first (when given; a twin that does not compile demotes the winner, as a failure would).
/// Returns how many winners were demoted.
int64_t confirm_winners(std::vector<ProblemTiming>& timings, std::vector<FuzzedCandidate>& fuzzed,
                        const std::vector<CompiledCandidate>& compiled, const FuzzOptions& full,
                        const TwinCompiler& twins = {});

}  // namespace tunefuzz
