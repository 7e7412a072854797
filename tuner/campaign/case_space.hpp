// A candidate's fuzz domain as the campaign and the generator see it: the case space its cases are drawn from
// (preferred units, tile edges in the problem's terms, launch overrides, and the template's refusal as what it
// accepts, with the steps and the bound on M probed from that refusal), and the problem a case record is. The
// fuzz job draws from it on the device side; the campaign needs it too (the sanitizers' fixed cases, the
// domain coverage a campaign reports), so it sits here, beneath both.
#pragma once

#include <cstdint>

#include "fuzz/case.hpp"
#include "fuzz/generators.hpp"
#include "runtime/templates/kernel_template.hpp"

namespace tunefuzz {

/// The generator's view of a candidate: its preferred units, tile edges, launch overrides, and its domain
/// (the template's refusal as `accepts`, with the steps each layout allows and the largest M probed from it).
fuzz::CaseSpace case_space_for(const Candidate& candidate, int64_t sm_count);

/// The problem shape a record describes (row-major), with the base alignment its offsets leave.
GemmShape shape_of(const fuzz::CaseRecord& record, int input_bytes, int output_bytes);

}  // namespace tunefuzz
