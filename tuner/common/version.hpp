// The tool's version and the commit it was built from (generated at build time by cmake/WriteVersion.cmake).
#pragma once

#include <string>

namespace tunefuzz {

/// e.g. `0.1.0`.
std::string tool_version();
/// `git describe`-like: the commit hash, with `-dirty` when the tree had uncommitted changes; `unknown`
/// outside a git checkout.
std::string tool_commit();

}  // namespace tunefuzz
