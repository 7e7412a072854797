// `fuzz run` as a library: rounds of the fuzz stage over every compiled candidate, each round with its own
// seed (the campaign's plus the round), until a budget of fuzzing time is spent or a number of rounds is
// done; a candidate that fails leaves the later rounds. Every step goes to a journal, so a campaign that was
// killed, or stopped by its budget, carries on with `resume`: the rounds are played again from the first,
// each finished step taken from the journal under its verdict's key (same candidate image, cases and seed),
// only what is missing is fuzzed, and the budget counts the fuzzing time of every call together. The report
// of a resumed campaign is the one an uninterrupted campaign of the same rounds writes, plus its calls.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "tuner/campaign/stages.hpp"

namespace tunefuzz {

struct FuzzRunSettings {
  std::filesystem::path work_directory;  ///< worker jobs and reproducers
  std::filesystem::path journal;         ///< where every step is recorded
  bool resume = false;                   ///< carry on the campaign the journal holds (start one if none)
  bool retry_quarantined = false;        ///< fuzz again candidates that were running at two kills in a row
  std::string config_sha256;             ///< of the config's text: a journal of another config is refused
  std::string arch;                      ///< the config's gpu.arch (reproducers name it)
  double budget_s = 600;                 ///< fuzzing seconds of all calls together
  int64_t rounds = 0;                    ///< at most this many rounds (0: as many as the budget allows)
  int64_t cases = 100;                   ///< per candidate and round
  uint64_t seed = 0;                     ///< round r fuzzes with seed + r
  int workers = 4;
  double timeout_s = 120;                ///< per fuzz job
  int huge_weight = 0;                   ///< fuzz::CaseSpace::huge_weight
  std::vector<std::string> sanitizer;    ///< `--sanitize`: the compute-sanitizer wrapper, empty for none
  double compile_seconds = 0;            ///< this call's compiling, reported beside the fuzzing
  std::vector<Gpu> gpus;                 ///< `--gpus`: a pool of `workers` per GPU (empty: the one seen)
};

/// One call of a campaign (one process).
struct FuzzCall {
  double seconds = 0;  ///< fuzzing; a call that was killed counts until its last journalled verdict
  double compile_seconds = 0;
  bool ended = false;  ///< it ended by itself (budget or rounds done), not killed
};

struct FuzzRunReport {
  std::string card, driver;
  uint64_t seed = 0;
  int64_t candidates = 0;  ///< compiled candidates at the start
  int64_t cases_per_round = 0;
  int64_t rounds = 0;
  int64_t cases = 0;
  int64_t last_round_not_started = 0;  ///< candidates of the last round whose job the budget did not start
  /// Cases on plain images and on perturbed twins, counted where their jobs were timed, and the jobs' summed
  /// wall time: cases per second of one worker on each (jobs run several at once: neither is the campaign's
  /// rate, their ratio is what the delays cost).
  int64_t timed_plain_cases = 0, timed_perturbed_cases = 0;
  double plain_job_seconds = 0, perturbed_job_seconds = 0;
  /// The workers' seconds by phase (FuzzResult::phase_seconds) over the timed jobs above.
  std::map<std::string, double> phase_seconds;
  std::vector<FuzzCall> calls;         ///< every call of the campaign, this one last
  std::map<std::string, int64_t> coverage;  ///< bug-class tags over every case (domain classes left out)
  std::vector<FuzzedCandidate> totals;      ///< per candidate: its cases and tags over every round
  std::vector<FuzzedCandidate> failed;      ///< in the order they failed
  std::vector<std::string> quarantined;     ///< candidates running at two kills in a row: not fuzzed since

  double seconds() const;          ///< fuzzing, every call
  double compile_seconds() const;  ///< compiling, every call
  /// Why the campaign is empty work (fewer cases than one round), or "" when it is not.
  std::string empty_work() const;
  /// Nothing failed, nothing was quarantined, and at least one round's cases ran.
  bool succeeded() const { return failed.empty() && quarantined.empty() && empty_work().empty(); }
};

/// Runs (or carries on) the campaign over the `compiled` candidates that compiled. Throws Error{bad_input}
/// naming the journal and field when asked to resume a journal of another campaign (another config, seed,
/// cases, sanitizer, huge-case weight, card or driver), or one `fuzz run` did not write.
FuzzRunReport fuzz_campaign(const std::vector<CompiledCandidate>& compiled, const DeviceInfo& device,
                            const FuzzRunSettings& settings);

/// The report as `tunefuzz-fuzz-run/1` YAML, without the fields only the caller knows (command, domain
/// coverage).
YAML::Node to_yaml(const FuzzRunReport& report);

}  // namespace tunefuzz
