"""The connectome's core: the declared and observed call graphs, their canonical bytes, diff,
reach questions and drawings, and the run-time observers that feed them. No Django: of the
package it imports only the protocol core and itself. The modules beside this folder adapt
it to Django (the store, the exports, the MCP resources, the query and mail observers)."""
