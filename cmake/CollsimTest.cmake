# collsim_add_test(NAME <binary> SOURCES <files...> LIBS <targets...> [LABELS <labels...>])
#
# One GoogleTest binary per module; every TEST() becomes its own CTest test through
# gtest_discover_tests, labelled with the module name (and e.g. `gpu` for GPU-only suites).
function(collsim_add_test)
  cmake_parse_arguments(T "" "NAME" "SOURCES;LIBS;LABELS" ${ARGN})
  add_executable(${T_NAME} ${T_SOURCES})
  target_link_libraries(${T_NAME} PRIVATE ${T_LIBS} GTest::gtest GTest::gtest_main collsim::warnings)
  target_include_directories(${T_NAME} PRIVATE ${PROJECT_SOURCE_DIR})
  target_compile_definitions(${T_NAME} PRIVATE
    COLLSIM_SOURCE_DIR="${PROJECT_SOURCE_DIR}" COLLSIM_BINARY_DIR="${PROJECT_BINARY_DIR}")
  gtest_discover_tests(${T_NAME} PROPERTIES LABELS "${T_NAME};${T_LABELS}"
                       DISCOVERY_TIMEOUT 60)
endfunction()
