# collsim_add_test(NAME <binary> SOURCES <files...> LIBS <targets...>)
#
# One GoogleTest binary per module; every TEST() becomes its own CTest test through
# gtest_discover_tests, labelled with the binary's name. (gtest_discover_tests forwards only the
# first entry of a LABELS list, so suites that need another label, such as `gpu`, register
# their binary themselves: see tests/backends/CMakeLists.txt.)
function(collsim_add_test)
  cmake_parse_arguments(T "" "NAME" "SOURCES;LIBS" ${ARGN})
  add_executable(${T_NAME} ${T_SOURCES})
  target_link_libraries(${T_NAME} PRIVATE ${T_LIBS} GTest::gtest GTest::gtest_main collsim::warnings)
  target_include_directories(${T_NAME} PRIVATE ${PROJECT_SOURCE_DIR})
  target_compile_definitions(${T_NAME} PRIVATE
    COLLSIM_SOURCE_DIR="${PROJECT_SOURCE_DIR}" COLLSIM_BINARY_DIR="${PROJECT_BINARY_DIR}")
  gtest_discover_tests(${T_NAME} PROPERTIES LABELS ${T_NAME}
                       DISCOVERY_TIMEOUT 60)
endfunction()
