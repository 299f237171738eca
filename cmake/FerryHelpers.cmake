# Helpers that keep every library, test and fuzz target declared the same way.

# ferry_library(NAME SRCS ... DEPS ...): a static library ferry_<NAME>, alias ferry::<NAME>.
# Headers are included as "<folder>/<file>.h" from broker/src, so every library exposes broker/src.
function(ferry_library name)
  cmake_parse_arguments(ARG "" "" "SRCS;DEPS" ${ARGN})
  if(ARG_SRCS)
    add_library(ferry_${name} STATIC ${ARG_SRCS})
    target_include_directories(ferry_${name} PUBLIC ${FERRY_BROKER_SRC})
    target_link_libraries(ferry_${name} PUBLIC ${ARG_DEPS})
  else()
    add_library(ferry_${name} INTERFACE)
    target_include_directories(ferry_${name} INTERFACE ${FERRY_BROKER_SRC})
    target_link_libraries(ferry_${name} INTERFACE ${ARG_DEPS})
  endif()
  add_library(ferry::${name} ALIAS ferry_${name})
endfunction()

# ferry_test(NAME SRCS ... DEPS ...): a GoogleTest binary whose tests ctest runs one by one, labelled "unit".
function(ferry_test name)
  cmake_parse_arguments(ARG "" "" "SRCS;DEPS" ${ARGN})
  add_executable(${name} ${ARG_SRCS})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} GTest::gtest GTest::gtest_main)
  gtest_discover_tests(${name} DISCOVERY_MODE PRE_TEST PROPERTIES LABELS unit)
endfunction()

# ferry_fuzz(NAME SRC ... DEPS ... CORPUS dir): a libFuzzer target when FERRY_FUZZ is on; always a
# replay test that runs every file of the seed corpus through the same entry point.
function(ferry_fuzz name)
  cmake_parse_arguments(ARG "" "CORPUS" "SRCS;DEPS" ${ARGN})
  add_executable(${name}_replay ${ARG_SRCS} ${FERRY_SOURCE_DIR}/cmake/fuzz_replay_main.cc)
  target_link_libraries(${name}_replay PRIVATE ${ARG_DEPS})
  add_test(NAME ${name}_corpus COMMAND ${name}_replay ${ARG_CORPUS})
  set_tests_properties(${name}_corpus PROPERTIES LABELS "unit;fuzz")
  if(FERRY_FUZZ)
    add_executable(${name} ${ARG_SRCS})
    target_compile_options(${name} PRIVATE -fsanitize=fuzzer)
    target_link_libraries(${name} PRIVATE ${ARG_DEPS} -fsanitize=fuzzer)
  endif()
endfunction()

include(GoogleTest)
