# The runtime's components and the LD_PRELOAD module libwhatif.so (included by runtime/CMakeLists.txt).
whatif_component(whatif_os os/os.cpp os/perf_event.cpp os/perf_event_signal.cpp os/cpu_timer.cpp os/fd_guard.cpp)
target_link_libraries(whatif_os PUBLIC whatif_base rt)
whatif_component(whatif_sampling sampling/sampler.cpp sampling/sampler_signal.cpp)
target_link_libraries(whatif_sampling PUBLIC whatif_os)
whatif_component(whatif_delays delays/delays.cpp delays/delays_signal.cpp)
target_link_libraries(whatif_delays PUBLIC whatif_os)
whatif_component(whatif_progress progress/progress_points.cpp progress/progress_signal.cpp)
whatif_component(whatif_profile profile/profile_writer.cpp)
target_link_libraries(whatif_profile PUBLIC whatif_os nlohmann_json::nlohmann_json)
whatif_component(whatif_settle core/settle_signal.cpp)
target_link_libraries(whatif_settle PUBLIC whatif_sampling whatif_delays whatif_progress)
whatif_component(whatif_core core/config.cpp core/threads.cpp core/runtime.cpp experiment/profiler.cpp
                 interpose/real.cpp interpose/guard.cpp)
target_link_libraries(whatif_core PUBLIC whatif_settle whatif_sampling whatif_delays whatif_progress whatif_profile
                      whatif_symbols nlohmann_json::nlohmann_json ${CMAKE_DL_LIBS})

add_library(whatif_runtime SHARED interpose/shims.cpp)
target_compile_options(whatif_runtime PRIVATE ${WHATIF_RUNTIME_FLAGS})
target_include_directories(whatif_runtime PRIVATE ${CMAKE_SOURCE_DIR}/runtime)
target_link_libraries(whatif_runtime PRIVATE whatif_core)
# Only the public ABI is exported; the runtime's own C++ symbols stay inside.
target_link_options(whatif_runtime PRIVATE -Wl,--exclude-libs,ALL -Wl,-z,nodelete)
set_target_properties(whatif_runtime PROPERTIES OUTPUT_NAME whatif LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/lib)
