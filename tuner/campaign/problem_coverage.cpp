// Candidates per problem, the search for a point that would serve a problem none serves, and why a problem
// ended a campaign without a winner.
#include "tuner/campaign/problem_coverage.hpp"

#include <algorithm>
#include <map>
#include <set>

namespace tunefuzz {

namespace {

constexpr size_t kPairStarts =
    8;  // starting points tried with two changed parameters (the search is quadratic)

bool holds_every_constraint(const KernelTemplate& t, const Point& point, const GpuLimits& limits) {
  return std::all_of(t.constraints.begin(), t.constraints.end(),
                     [&](const Constraint& c) { return c.holds(point, limits); });
}

/// The values tried for each parameter: the config's, the template's default, 0, 1 and powers of two to 256.
std::vector<std::pair<std::string, std::vector<int64_t>>> ladders(const KernelTemplate& t,
                                                                  const Config& config) {
  std::vector<std::pair<std::string, std::vector<int64_t>>> out;
  for (const ParameterDecl& parameter : t.parameters) {
    std::set<int64_t> values = {parameter.default_value, 0};
    for (int64_t v = 1; v <= 256; v *= 2) values.insert(v);
    for (const TemplateSearch& search : config.templates)
      if (search.name == t.name)
        for (const ParameterValues& listed : search.space)
          if (listed.name == parameter.name) values.insert(listed.values.begin(), listed.values.end());
    out.emplace_back(parameter.name, std::vector<int64_t>(values.begin(), values.end()));
  }
  return out;
}

Point with(const Point& point, const std::string& name, int64_t value) {
  std::vector<std::pair<std::string, int64_t>> values = point.values();
  for (auto& [n, v] : values)
    if (n == name) v = value;
  return Point(std::move(values));
}

/// The first point (one change from a start, else two from the first few) that serves `shape`.
std::optional<Suggestion> search(const KernelTemplate& t, const std::vector<Point>& starts, bool searched,
                                 const GemmShape& shape, const Config& config) {
  const auto ladder = ladders(t, config);
  const auto serves = [&](const Point& p) {
    return holds_every_constraint(t, p, config.gpu.limits) && !t.refusal(p, shape);
  };
  const auto suggestion = [&](const Point& p, const Point& start) {
    Suggestion s{&t, p, "", searched};
    for (size_t i = 0; i < p.values().size(); ++i) {
      const auto& [name, value] = p.values()[i];
      if (value != start.values()[i].second)
        s.changes += (s.changes.empty() ? "" : ",") + name + "=" + std::to_string(value);
    }
    return s;
  };
  for (const Point& start : starts)
    for (const auto& [name, values] : ladder)
      for (int64_t v : values)
        if (const Point p = with(start, name, v); serves(p)) return suggestion(p, start);
  for (size_t s = 0; s < std::min(starts.size(), kPairStarts); ++s)
    for (size_t i = 0; i < ladder.size(); ++i)
      for (size_t j = i + 1; j < ladder.size(); ++j)
        for (int64_t a : ladder[i].second)
          for (int64_t b : ladder[j].second)
            if (const Point p = with(with(starts[s], ladder[i].first, a), ladder[j].first, b); serves(p))
              return suggestion(p, starts[s]);
  return std::nullopt;
}

std::vector<Suggestion> suggestions_for(const Problem& problem, const Config& config,
                                        const SpaceStage& stage) {
  const TypePair types{problem.input, problem.output};
  const GemmShape shape = shape_of(problem);
  std::vector<Suggestion> out;
  for (const KernelTemplate* t : all_templates()) {
    if (std::find(t->supported_types.begin(), t->supported_types.end(), types) == t->supported_types.end())
      continue;
    try {
      t->compile_arch(config.gpu.arch);
    } catch (const Error&) {
      continue;  // not for this GPU
    }
    std::vector<Point> starts;
    for (const SpaceReport& report : stage.reports)
      if (report.kernel_template == t) starts.insert(starts.end(), report.kept.begin(), report.kept.end());
    const bool searched = !starts.empty();
    if (!searched) starts.push_back(t->default_point());
    if (auto found = search(*t, starts, searched, shape, config)) out.push_back(std::move(*found));
  }
  return out;
}

}  // namespace

std::string describe_problem(const Problem& p) {
  return std::to_string(p.m) + "x" + std::to_string(p.n) + "x" + std::to_string(p.k) + " " +
         to_string(p.input) + "->" + to_string(p.output) + " " + to_string(p.layout);
}

std::vector<ProblemCandidates> candidates_per_problem(const Config& config, const SpaceStage& stage) {
  std::vector<ProblemCandidates> out;
  for (const Problem& problem : config.problems) {
    ProblemCandidates entry{problem, 0, {}};
    const GemmShape shape = shape_of(problem);
    for (const Candidate& c : stage.candidates)
      entry.candidates +=
          c.types == TypePair{problem.input, problem.output} && !c.kernel_template->refusal(c.point, shape);
    if (entry.candidates == 0) entry.suggestions = suggestions_for(problem, config, stage);
    out.push_back(std::move(entry));
  }
  return out;
}

std::vector<std::string> uncovered_problem_lines(const std::vector<ProblemCandidates>& coverage) {
  std::vector<std::string> lines;
  for (const ProblemCandidates& entry : coverage) {
    if (entry.candidates > 0) continue;
    std::string line = "problem " + entry.problem.name + " (" + describe_problem(entry.problem) +
                       "): no candidate accepts it; ";
    if (entry.suggestions.empty()) {
      line += "no template here computes it at any point searched";
    } else {
      line += "it would be served by ";
      for (size_t i = 0; i < entry.suggestions.size(); ++i) {
        const Suggestion& s = entry.suggestions[i];
        line += (i ? "; or " : "") + s.kernel_template->name +
                (s.searched ? " with " : " (not searched by the config) with ") +
                (s.changes.empty() ? "its defaults" : s.changes) + ", e.g. " + s.point.str();
      }
    }
    lines.push_back(line);
  }
  return lines;
}

std::string why_no_winner(const ProblemTiming& timing, const ProblemCandidates& coverage,
                          const std::vector<CompiledCandidate>& compiled,
                          const std::vector<FuzzedCandidate>& fuzzed) {
  if (coverage.candidates == 0) return uncovered_problem_lines({coverage}).front();
  const Problem& p = timing.problem;
  const auto accepts = [&](const Candidate& c) {
    return c.types == TypePair{p.input, p.output} && !c.kernel_template->refusal(c.point, shape_of(p));
  };
  std::map<std::string, int64_t> pruned, failed;
  int64_t kept = 0, passed = 0;
  for (const CompiledCandidate& c : compiled) {
    if (!accepts(c.candidate)) continue;
    if (c.status == CompileStatus::compiled)
      ++kept;
    else
      ++pruned[to_string(c.status)];
  }
  for (const FuzzedCandidate& f : fuzzed) {
    if (!accepts(f.candidate)) continue;
    if (f.passed)
      ++passed;
    else if (f.failure)
      ++failed[fuzz::to_string(f.failure->failure_class)];
    else
      ++failed[f.quarantined ? "quarantined (--resume --retry-quarantined fuzzes them)" : "not fuzzed"];
  }
  const auto counts = [](const std::map<std::string, int64_t>& by) {
    std::string out;
    for (const auto& [what, count] : by)
      out += (out.empty() ? "" : ", ") + std::to_string(count) + " " + what;
    return out;
  };
  const std::string head = "problem " + p.name + " (" + describe_problem(p) + "): no winner: ";
  if (kept == 0)
    return head + "compilation pruned all " + std::to_string(coverage.candidates) +
           " candidates that accept it (" + counts(pruned) + ")";
  if (passed == 0)
    return head + "none of its " + std::to_string(kept) + " compiled candidates passed fuzzing (" +
           counts(failed) + ")";
  std::map<std::string, int64_t> statuses;
  for (const TimedEntry& e : timing.entries) ++statuses[e.status];
  return head + std::to_string(passed) + " candidates passed fuzzing, none was verified and timed (" +
         (statuses.empty() ? std::string("none timed") : counts(statuses)) + ")";
}

}  // namespace tunefuzz
