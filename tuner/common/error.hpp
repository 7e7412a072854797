// The one error type (tunefuzz::Error), declared once with the runtime's public API; the codebase includes it
// by this name.
#pragma once

#include "tunefuzz/error.hpp"
