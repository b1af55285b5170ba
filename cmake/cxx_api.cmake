# The C++ API (include/srcu.hpp): its tests and example.  Included from the
# top-level CMakeLists.txt after tests/ and examples/.

if(SRCU_INSTALL)
  install(FILES include/srcu.hpp DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  # doc/cpp.md: with the other docs (CMakeLists.txt).
endif()

# C++ is enabled only for the tests (top-level CMakeLists.txt).
get_property(SRCU_LANGUAGES GLOBAL PROPERTY ENABLED_LANGUAGES)
if(NOT CMAKE_CXX_COMPILER OR NOT "CXX" IN_LIST SRCU_LANGUAGES)
  return()
endif()

if(SRCU_BUILD_TESTS)
  # The API as a C++17 user sees it, and again as C++20 (constinit,
  # [[no_unique_address]]).  Each runs under both backends; the TSan suite
  # runs all of them with the fence backend.
  add_executable(test_cpp_api tests/test_cpp_api.cpp)
  add_executable(test_cpp_api20 tests/test_cpp_api.cpp)
  set_target_properties(test_cpp_api PROPERTIES CXX_STANDARD 17 CXX_STANDARD_REQUIRED ON
    CXX_EXTENSIONS OFF)
  set_target_properties(test_cpp_api20 PROPERTIES CXX_STANDARD 20 CXX_STANDARD_REQUIRED ON
    CXX_EXTENSIONS OFF)
  foreach(t test_cpp_api test_cpp_api20)
    target_link_libraries(${t} PRIVATE srcu)
  endforeach()
  add_test(NAME cpp_api COMMAND test_cpp_api)
  add_test(NAME cpp_api.fence COMMAND test_cpp_api)
  add_test(NAME cpp_api20 COMMAND test_cpp_api20)
  set_tests_properties(cpp_api.fence PROPERTIES ENVIRONMENT SRCU_BACKEND=fence)
  set_tests_properties(cpp_api cpp_api.fence cpp_api20 PROPERTIES TIMEOUT 120)

  # A discarded guard must not compile silently: the section would end at
  # once.  Compiled, not linked, with the build's compiler and flags.
  foreach(std 17 20)
    add_test(NAME cpp_api_nodiscard.c++${std}
      COMMAND ${CMAKE_CXX_COMPILER} -std=c++${std} -Wall -Wextra -Werror -fsyntax-only
              -I${CMAKE_CURRENT_SOURCE_DIR}/include
              ${CMAKE_CURRENT_SOURCE_DIR}/tests/cpp_api_nodiscard.cpp)
    set_tests_properties(cpp_api_nodiscard.c++${std} PROPERTIES WILL_FAIL TRUE)
    # ... and compiles once the guard is kept (the test's control).
    add_test(NAME cpp_api_nodiscard_ok.c++${std}
      COMMAND ${CMAKE_CXX_COMPILER} -std=c++${std} -Wall -Wextra -Werror -fsyntax-only
              -DSRCU_KEEP_GUARD -I${CMAKE_CURRENT_SOURCE_DIR}/include
              ${CMAKE_CURRENT_SOURCE_DIR}/tests/cpp_api_nodiscard.cpp)
  endforeach()
  # A dropped cleanup_srcu_struct() result, as C++ (tests/CMakeLists.txt's
  # cleanup_nodiscard): [[nodiscard]] from C++17, the attribute before.
  foreach(std 11 17 20)
    add_test(NAME cleanup_nodiscard.c++${std}
      COMMAND ${CMAKE_CXX_COMPILER} -x c++ -std=c++${std} -Wall -Wextra -Werror -c -o /dev/null
              -I${CMAKE_CURRENT_SOURCE_DIR}/include
              ${CMAKE_CURRENT_SOURCE_DIR}/tests/cleanup_nodiscard.c)
    set_tests_properties(cleanup_nodiscard.c++${std} PROPERTIES
      PASS_REGULAR_EXPRESSION "unused-result")
    add_test(NAME cleanup_nodiscard_ok.c++${std}
      COMMAND ${CMAKE_CXX_COMPILER} -x c++ -std=c++${std} -Wall -Wextra -Werror -c -o /dev/null
              -DSRCU_KEEP_RESULT -I${CMAKE_CURRENT_SOURCE_DIR}/include
              ${CMAKE_CURRENT_SOURCE_DIR}/tests/cleanup_nodiscard.c)
  endforeach()
endif()

if(SRCU_BUILD_EXAMPLES)
  # A service's configuration swapped under readers that block.
  add_executable(cpp-config examples/cpp-config/cpp-config.cpp)
  set_target_properties(cpp-config PROPERTIES CXX_STANDARD 17 CXX_STANDARD_REQUIRED ON
    CXX_EXTENSIONS OFF RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/examples)
  target_link_libraries(cpp-config PRIVATE srcu)
  if(SRCU_BUILD_TESTS)
    # No reader may see a retired configuration (the exit status says so).
    add_test(NAME example_cpp_config COMMAND cpp-config --duration 1)
    add_test(NAME example_cpp_config.fence COMMAND cpp-config --duration 1)
    set_tests_properties(example_cpp_config.fence PROPERTIES ENVIRONMENT SRCU_BACKEND=fence)
    set_tests_properties(example_cpp_config example_cpp_config.fence PROPERTIES TIMEOUT 60)
    # The check must be able to fail: configurations deleted without a
    # grace period are seen retired.  Not under TSan: the race it shows
    # is real, and TSan would report it instead.
    if(NOT SRCU_SANITIZE MATCHES "thread")
      add_test(NAME example_cpp_config.busted COMMAND cpp-config --busted --duration 1)
      set_tests_properties(example_cpp_config.busted PROPERTIES
        PASS_REGULAR_EXPRESSION "violations: [1-9]" TIMEOUT 60)
    endif()
  endif()
endif()
