# The pytest suite (python/tests) as one ctest test, run against the module in this build tree.
# With ASan (scripts/test.sh builds with address,undefined) the module needs the ASan runtime
# loaded before anything else in the interpreter: LD_PRELOAD it, with libstdc++ (the interpreter
# does not link it, and ASan's __cxa_throw interceptor must find the real one when it starts,
# else the first C++ throw aborts with "CHECK failed ... real___cxa_throw"), and leave leak checking off
# (the interpreter itself keeps memory at exit); the leak test watches RSS instead, with a
# small quarantine so that freed memory is reused quickly (docs/ARCHITECTURE.md, Python).
set(GLASSBOX_PYTEST_ENV PYTHONPATH=${CMAKE_CURRENT_BINARY_DIR} GLASSBOX_CLI=$<TARGET_FILE:glassbox>
    GLASSBOX_BUILD_DIR=${PROJECT_BINARY_DIR} GLASSBOX_DECODER_MODELS=${PROJECT_BINARY_DIR}/tests/generation/models
    PYTHONDONTWRITEBYTECODE=1)
if(GLASSBOX_SANITIZE MATCHES "address")
  execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=libasan.so OUTPUT_VARIABLE GLASSBOX_LIBASAN
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
  execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=libstdc++.so OUTPUT_VARIABLE GLASSBOX_LIBSTDCXX
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
  list(APPEND GLASSBOX_PYTEST_ENV "LD_PRELOAD=${GLASSBOX_LIBASAN} ${GLASSBOX_LIBSTDCXX}"
       ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:quarantine_size_mb=4
       GLASSBOX_SANITIZED=1)
endif()
add_test(NAME python_pytest
         COMMAND ${CMAKE_COMMAND} -E env ${GLASSBOX_PYTEST_ENV}
                 ${Python_EXECUTABLE} -m pytest -q -p no:cacheprovider -rs ${CMAKE_CURRENT_SOURCE_DIR}/tests)
# COST: start it among the first (it is registered last and runs ~3 min under ASan; last, it ran alone).
set_tests_properties(python_pytest PROPERTIES FIXTURES_REQUIRED "tokenizer_goldens;decoder_models" TIMEOUT 1500 LABELS python COST 1000)
