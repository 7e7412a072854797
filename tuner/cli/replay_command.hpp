// `tune replay CONFIG JOURNAL`: the search strategies replayed against the timings a campaign recorded (no
// GPU), per problem: evaluations spent and the chosen winner's time against the recorded exhaustive search's.
#pragma once

#include <string>
#include <vector>

namespace tunefuzz::cli {

int replay(const std::string& config, const std::string& journal, const std::vector<std::string>& strategies,
           const std::string& output, bool json, const std::string& command_line);

}  // namespace tunefuzz::cli
