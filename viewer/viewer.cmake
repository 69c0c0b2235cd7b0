# Builds the viewer page (one self-contained HTML file) next to the `whatif` binary, where
# `whatif view` looks for it. Needs node and npm; reruns only when the viewer's sources,
# lock file or the profile format change. Without node the C++ build proceeds and `whatif view`
# explains what to install. Sanitizer builds skip it (they only run unit tests).
find_program(WHATIF_NODE node)
find_program(WHATIF_NPM npm)
if(WHATIF_SANITIZE)
  # nothing: `whatif view` from such a build falls back to viewer/dist or $WHATIF_VIEWER_HTML
elseif(WHATIF_NODE AND WHATIF_NPM)
  file(GLOB_RECURSE WHATIF_VIEWER_SOURCES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/viewer/src/*)
  set(WHATIF_VIEWER_HTML ${CMAKE_CURRENT_BINARY_DIR}/whatif-viewer.html)
  add_custom_command(
    OUTPUT ${WHATIF_VIEWER_HTML}
    COMMAND ${CMAKE_SOURCE_DIR}/viewer/scripts/build-for-cmake.sh ${WHATIF_VIEWER_HTML}
    DEPENDS ${WHATIF_VIEWER_SOURCES} ${CMAKE_SOURCE_DIR}/viewer/build.mjs ${CMAKE_SOURCE_DIR}/viewer/package.json
            ${CMAKE_SOURCE_DIR}/viewer/package-lock.json ${CMAKE_SOURCE_DIR}/format/profile-format.json
    COMMENT "Building the HTML viewer (npm, esbuild) -> whatif-viewer.html"
    VERBATIM)
  add_custom_target(whatif_viewer ALL DEPENDS ${WHATIF_VIEWER_HTML})
else()
  message(STATUS "whatif: node/npm not found; `whatif view` needs them at build time (scripts/install-deps.sh)")
endif()
