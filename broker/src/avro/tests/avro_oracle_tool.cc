// Ferry's verdicts for the pairs tests/avro-oracle/run_oracle.py generates, in the format of AvroOracle.java there:
// one line per (reader, writer) pair, PARSE_ERROR, COMPATIBLE, or INCOMPATIBLE followed by TYPE@location items,
// then a tab and each schema's canonical text (or ERROR), tab-separated.

#include <fstream>
#include <iostream>
#include <string>

#include <nlohmann/json.hpp>

#include "avro/avro_schema.h"

namespace {

std::string canonical(const std::string& text) {
  auto parsed = ferry::avro::parse(text, {}, {});
  return parsed ? parsed.value()->canonical() : "ERROR";
}

std::string verdict(const std::string& reader_text, const std::string& writer_text) {
  auto reader = ferry::avro::parse(reader_text, {}, {});
  auto writer = ferry::avro::parse(writer_text, {}, {});
  if (!reader || !writer) return "PARSE_ERROR";
  const auto problems = reader.value()->backward_incompatibilities(*writer.value());
  if (problems.empty()) return "COMPATIBLE";
  std::string out = "INCOMPATIBLE";
  for (const auto& problem : problems) {
    if (problem.rfind("Unexpected exception", 0) == 0) return "INCOMPATIBLE EXCEPTION";
    // "<TYPE> at <location>: <message>"
    const auto at = problem.find(" at ");
    const auto colon = problem.find(": ", at);
    out += " " + problem.substr(0, at) + "@" + problem.substr(at + 4, colon - at - 4);
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: avro_oracle_tool PAIRS_FILE\n";
    return 2;
  }
  std::ifstream in(argv[1]);
  std::string line;
  while (std::getline(in, line)) {
    const auto pair = nlohmann::json::parse(line, nullptr, false);
    if (pair.is_discarded() || !pair.is_array() || pair.size() != 2 || !pair[0].is_string() || !pair[1].is_string()) {
      std::cerr << "avro_oracle_tool: malformed pair: " << line << "\n";
      return 2;
    }
    const auto& reader = pair[0].get_ref<const std::string&>();
    const auto& writer = pair[1].get_ref<const std::string&>();
    std::cout << verdict(reader, writer) << "\t" << canonical(reader) << "\t" << canonical(writer) << "\n";
  }
  return 0;
}
