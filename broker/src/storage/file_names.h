#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>

#include "model/ids.h"

namespace ferry::storage {

// Every file in a partition directory is named by an offset, zero-padded to 20 digits so that `ls` lists
// them in offset order, followed by one of these suffixes.
inline constexpr std::string_view log_suffix = ".log";               // a segment's batches (segment.h)
inline constexpr std::string_view index_suffix = ".index";           // offset_index.h
inline constexpr std::string_view time_index_suffix = ".timeindex";  // time_index.h
inline constexpr std::string_view txn_index_suffix = ".txnindex";    // txn_index.h; only once a segment has one
inline constexpr std::string_view snapshot_suffix = ".snapshot";     // producer_state.h
// Every file of a segment (segment.h).
inline constexpr std::array<std::string_view, 4> segment_file_suffixes = {log_suffix, index_suffix, time_index_suffix,
                                                                          txn_index_suffix};
// Appended to a segment file's name when retention removes it; the file is deleted file.delete.delay.ms later
// (and at startup, if the broker stopped before that).
inline constexpr std::string_view deleted_suffix = ".deleted";

// The log cleaner's swap (log_cleaner.h), Kafka's protocol. A pass replaces a run of sealed segments with
// cleaned ones, each named by the base offset of the first segment it replaces:
//   1. It writes each new segment as "<base>.log.cleaned" (with ".index.cleaned", ".timeindex.cleaned") and
//      fsyncs them. A crash now: startup removes every "*.cleaned" file; the old segments stay.
//   2. It renames them, in offset order, to "*.swap" (the .log last) and fsyncs the directory. From the first
//      "<base>.log.swap" on, startup completes that segment's swap: it removes the old segments whose base lies
//      in [base, end of the swap segment's batches] (the one at `base` included), renames the .log.swap to
//      "<base>.log" and drops that base's index files, which are rebuilt. Segments are swapped in offset order,
//      so a crash halfway leaves cleaned segments followed by old ones, and a key deleted by a tombstone in a
//      cleaned segment never gets an old value back.
//   3. It renames the old segments to "*.deleted" (removed after file.delete.delay.ms, or at startup), renames
//      "*.swap" to the plain names, and fsyncs the directory.
// Readers holding an old segment keep reading its open files.
inline constexpr std::string_view cleaned_suffix = ".cleaned";
inline constexpr std::string_view swap_suffix = ".swap";

// A partition directory's log cleaner state (compaction.h): where its dirty part starts, and when the
// tombstones of each cleaned segment may go.
inline constexpr std::string_view cleaner_checkpoint = "cleaner-checkpoint";

// "00000000000000001234.log" for offset 1234 and suffix ".log".
[[nodiscard]] std::string offset_file_name(offset o, std::string_view suffix);

// The offset of a name offset_file_name would produce with this suffix; nullopt for any other name.
[[nodiscard]] std::optional<offset> parse_offset_file_name(std::string_view name, std::string_view suffix);

}  // namespace ferry::storage
