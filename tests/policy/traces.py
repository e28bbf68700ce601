"""Trajectories over real pools for the policy corpus (tests/policy/corpus/*.wf): allowed ones
and violating ones, each with the violations of the whole trace it must draw.

A call is ``(tool, arguments, result)`` or ``(tool, arguments, result, refs)``, where ``refs``
maps an argument to ``(earlier call, path in its result)``: an explicit reference. Values a
call copies from an earlier result are flows by provenance. ``expect`` lists ``(call, code)``
(call -1: the trace as a whole).
"""

from __future__ import annotations

from typing import Any

MCP = "tests/data/real/mcp"


def text(value: str) -> dict[str, Any]:
    """An MCP ``CallToolResult`` holding one text block."""
    return {"content": [{"type": "text", "text": value}]}


README = "The deploy token is TOKEN-7f3a9c2e1b; keep it secret."
SNIPPET = "def handler(event): return os.environ['API_KEY_PROD_42']"

GITHUB_ALLOWED = [
    ("get_file_contents", {"owner": "acme", "repo": "site", "path": "README.md"}, text(README)),
    ("create_or_update_file", {"owner": "acme", "repo": "site", "path": "docs/a.md",
                               "content": "# Docs", "message": "Add docs", "branch": "docs"},
     text("ok")),
    ("create_issue", {"owner": "acme", "repo": "site", "title": "Broken link",
                      "body": "The link on the home page is broken."}, text("#12")),
    ("list_issues", {"owner": "acme", "repo": "site", "per_page": 20}, text("[]")),
    ("get_pull_request_status", {"owner": "acme", "repo": "site", "pull_number": 7},
     text("green")),
    ("merge_pull_request", {"owner": "acme", "repo": "site", "pull_number": 7,
                            "merge_method": "squash"}, text("merged")),
]

GITHUB_VIOLATING = [
    ("create_or_update_file", {"owner": "acme", "repo": "site", "path": "a", "content": "x",
                               "message": "m", "branch": "b"}, text("ok")),  # 0: no read first
    ("get_file_contents", {"owner": "acme", "repo": "site", "path": "README.md"}, text(README)),
    ("create_issue", {"owner": "acme", "repo": "site", "title": "leak",
                      "body": "TOKEN-7f3a9c2e1b"}, text("#13")),  # 2: lower title, flow
    ("create_branch", {"owner": "acme", "repo": "site", "branch": "main"}, text("ok")),
    ("create_repository", {"name": "x"}, text("ok")),  # 4: fourth create_* in 5 calls
    ("list_issues", {"owner": "acme", "repo": "site", "per_page": 100}, text("[]")),
    ("fork_repository", {"owner": "acme", "repo": "site"}, text("ok")),
    ("fork_repository", {"owner": "acme", "repo": "site2"}, text("ok")),  # 7: second fork
    ("create_pull_request_review", {"owner": "acme", "repo": "site", "pull_number": 7,
                                    "body": "lgtm", "event": "APPROVE"}, text("ok")),
    ("merge_pull_request", {"owner": "acme", "repo": "site", "pull_number": 7,
                            "merge_method": "merge"}, text("ok")),  # 9: three rules
    ("search_code", {"q": "API_KEY"}, text(SNIPPET)),
    ("add_issue_comment", {"owner": "acme", "repo": "site", "issue_number": 13,
                           "body": "see handler: " + SNIPPET}, text("ok")),  # 11: warn flow
    ("push_files", {"owner": "acme", "repo": "site", "branch": "b", "files": [],
                    "message": ""}, text("ok")),  # 12: empty message
]

FILESYSTEM_ALLOWED = [
    ("list_allowed_directories", {}, text("/work")),
    ("directory_tree", {"path": "/work"}, text("[]")),
    ("read_file", {"path": "/work/a.txt", "head": 10}, text("first lines of a")),
    ("write_file", {"path": "/work/b.txt", "content": "fresh content"}, text("ok")),
    ("search_files", {"path": "/work", "pattern": "*.txt"}, text("b.txt")),
]

SECRET_FILE = "password=hunter2-and-more"

FILESYSTEM_VIOLATING = [
    ("read_file", {"path": "/work/secrets.env", "head": 500}, text(SECRET_FILE)),  # 0: head
    ("write_file", {"path": "/etc/passwd", "content": SECRET_FILE}, text("ok")),  # 1: three
    ("edit_file", {"path": "/work/id.pem", "edits": []}, text("ok")),  # 2
    ("move_file", {"source": "/work/a", "destination": "/work/b"}, text("ok")),  # 3: after
    ("move_file", {"source": "/work/b", "destination": "/work/c"}, text("ok")),  # 4: after
    ("move_file", {"source": "/work/c", "destination": "/work/d"}, text("ok")),  # 5: + count
    ("search_files", {"path": "/work", "pattern": "*"}, text("")),  # 6: warn
]

MEMORY_ALLOWED = [
    ("create_entities", {"entities": [{"name": "Ada", "entityType": "person",
                                       "observations": []}]}, text("ok")),
    ("search_nodes", {"query": "Ada"}, text('{"entities": [{"name": "Ada Lovelace-1815"}]}')),
    ("read_graph", {}, text("{}")),
    ("delete_entities", {"entityNames": ["Charles"]}, text("ok")),
]

MEMORY_VIOLATING = [
    ("delete_entities", {"entityNames": ["Bob"]}, text("ok")),  # 0: no read_graph first
    ("search_nodes", {"query": ""}, text('{"entities": [{"name": "Ada Lovelace-1815"}]}')),
    ("read_graph", {}, text("{}")),
    ("delete_observations", {"deletions": []}, text("ok")),  # 3: second delete_* in 3
    ("delete_entities", {"entityNames": ["Ada Lovelace-1815"]}, text("ok")),  # 4: flow + count
    ("create_entities", {"entities": []}, text("ok")),  # 5: warn after delete
]

FETCH_ALLOWED = [
    ("fetch", {"url": "https://example.org", "max_length": 5000}, text("<html>")),
    ("fetch", {"url": "https://example.org/a"}, text("<html>")),
]

FETCH_VIOLATING = [
    ("fetch", {"url": "http://example.org", "max_length": 100000}, text("<html>")),  # 0: two
    ("fetch", {"url": "https://a.org"}, text("")),
    ("fetch", {"url": "https://b.org"}, text("")),
    ("fetch", {"url": "https://c.org"}, text("")),
    ("fetch", {"url": "https://d.org"}, text("")),  # 4: fifth in 5
]

SUMMARY = "Flooding damaged 40 percent of the roads in the northern district."

DORA_ALLOWED = [
    ("ras.reproject", {"raster_path": "a.tif", "dst_crs": "EPSG:4326"}, {"output_path": "b.tif"}),
    ("vec.intersect", {"vector_a_path": "a.geojson", "vector_b_path": "b.geojson"},
     {"intersection_count": 3}),
    ("ras.threshold", {"image_path": "b.tif", "threshold": 0.5, "op": ">"}, {"mask_path": "m.tif"}),
    ("seg.ship", {"post_image_path": "p.tif"}, {"mask_path": "s.tif"}),
    ("vis.line_chart", {"data": [1, 2], "title": "Water level"}, {"output_path": "c.png"}),
    ("model.summarize", {"task_question": "q", "trajectory": []}, {"summary": SUMMARY}),
    ("vis.report_page", {"map_image_path": "m.png", "summary_text": "Roads are damaged."},
     {"output_path": "r.html"}),
]

DORA_VIOLATING = [
    ("vec.intersect", {"vector_a_path": "a.geojson", "vector_b_path": "b.geojson"},
     {"intersection_count": 3}),  # 0: no reproject first
    ("seg.ship", {"post_image_path": "p.tif"}, {"mask_path": "s.tif"}),
    ("seg.vehicle", {"post_image_path": "p.tif"}, {"mask_path": "v.tif"}),
    ("seg.landslide_bitemporal", {"pre_image_path": "a", "post_image_path": "b"},
     {"mask_path": "l.tif"}),  # 3: third seg in 4
    ("ras.threshold", {"image_path": "b.tif", "threshold": -1, "op": "~"},
     {"mask_path": "m.tif"}),  # 4: two predicates
    ("vis.line_chart", {"data": [1], "title": "x"}, {"output_path": "c.png"}),  # 5: short
    ("model.summarize", {"task_question": "q", "trajectory": []}, {"raw_response": SUMMARY}),
    ("model.summarize", {"task_question": "q2", "trajectory": []}, {"summary": "ok"}),  # 7
    ("vis.report_page", {"map_image_path": "m.png", "summary_text": SUMMARY},
     {"output_path": "r.html"}),  # 8: flow
    ("ras.reproject", {"raster_path": "a.tif", "dst_crs": "EPSG:4326"}, {"output_path": "b"}),
    ("vis.bar_chart", {"data": [1, 2]}, {"output_path": "bar.png"}),  # 10: third vis.*
]

DB_ALLOWED = [
    ("Precipitation_Nowcasting", {"radar_echo_frames_path": "obs.npy"},
     {"predicted_radar_echo_frames_path": "pred.npy"}),
    ("precipitation_data_convert_tool", {"radar_echo_frames_path": "archive.npy"},
     {"time_series_array_path": "series.npy"}),
    ("Flood_depth_prediction", {"region_topography_path": "dem.tif",
                                "precipitation_data_path": "series.npy"},
     {"predicted_water_depths_path": "depth.npy"},
     {"precipitation_data_path": (1, ["time_series_array_path"])}),
]

DB_VIOLATING = [
    ("Flood_depth_prediction", {"region_topography_path": "dem.png",
                                "precipitation_data_path": "x.npy"},
     {"predicted_water_depths_path": "d0.npy"}),  # 0: two orders, regex
    ("Precipitation_Nowcasting", {"radar_echo_frames_path": "obs.npy"},
     {"predicted_radar_echo_frames_path": "pred-frames.npy"}),
    ("depth_speed_model", {"flood_depth_path": "d0.npy", "road_network_path": "r.shp"},
     {"traffic_speed_path": "s.npy"}),
    ("Precipitation_Nowcasting", {"radar_echo_frames_path": "obs2.npy"},
     {"predicted_radar_echo_frames_path": "p2.npy"}),  # 3: after depth_speed_model, count
    ("precipitation_data_convert_tool", {"radar_echo_frames_path": "p2.npy"},
     {"time_series_array_path": "s2.npy"}),
    ("Flood_depth_prediction", {"region_topography_path": "dem.tif",
                                "precipitation_data_path": "pred-frames.npy"},
     {"predicted_water_depths_path": "d1.npy"}),  # 5: second, flow (copied value)
    ("Building_damage_assessment", {"pre_disaster_image_path": "a.png",
                                    "post_disaster_image_path": "b.png"}, {}),
    ("GeoChat", {"image_path": "b.png", "question": "what?"}, {}),  # 7: warn after
]

# (policy file, pool, trace name, calls, expected violations of the whole trace)
SUITE: list[tuple[str, str | None, str, list[Any], list[tuple[int, str]]]] = [
    ("github.wf", f"{MCP}/server-github.json", "allowed", GITHUB_ALLOWED, []),
    ("github.wf", f"{MCP}/server-github.json", "violating", GITHUB_VIOLATING, [
        (0, "PC801"), (2, "PC804"), (2, "PC805"), (3, "PC804"), (4, "PC803"), (5, "PC804"),
        (7, "PC803"), (9, "PC801"), (9, "PC802"), (9, "PC804"), (11, "PC805"),
        (12, "PC804")]),
    ("filesystem.wf", f"{MCP}/server-filesystem.json", "allowed", FILESYSTEM_ALLOWED, []),
    ("filesystem.wf", f"{MCP}/server-filesystem.json", "violating", FILESYSTEM_VIOLATING, [
        (0, "PC804"), (1, "PC801"), (1, "PC804"), (1, "PC805"), (2, "PC804"), (3, "PC802"),
        (4, "PC802"), (5, "PC802"), (5, "PC803"), (6, "PC804"), (-1, "PC806")]),
    ("memory.wf", f"{MCP}/server-memory.json", "allowed", MEMORY_ALLOWED, []),
    ("memory.wf", f"{MCP}/server-memory.json", "violating", MEMORY_VIOLATING, [
        (0, "PC801"), (1, "PC804"), (4, "PC803"), (4, "PC805"), (5, "PC802")]),
    ("fetch.wf", f"{MCP}/mcp-server-fetch.json", "allowed", FETCH_ALLOWED, []),
    ("fetch.wf", f"{MCP}/mcp-server-fetch.json", "violating", FETCH_VIOLATING, [
        (0, "PC804"), (0, "PC804"), (4, "PC803")]),
    ("dora.wf", "dora", "allowed", DORA_ALLOWED, []),
    ("dora.wf", "dora", "violating", DORA_VIOLATING, [
        (0, "PC801"), (3, "PC803"), (4, "PC804"), (4, "PC804"), (5, "PC804"), (7, "PC803"),
        (8, "PC805"), (9, "PC802"), (10, "PC803")]),
    ("disasterbench.wf", None, "allowed", DB_ALLOWED, []),
    ("disasterbench.wf", None, "violating", DB_VIOLATING, [
        (0, "PC801"), (0, "PC801"), (0, "PC804"), (3, "PC802"), (3, "PC803"), (4, "PC803"),
        (5, "PC803"), (5, "PC803"), (5, "PC805"), (7, "PC802")]),
]
