"""A toy arm whose first start loses its seam port to another process: while PORT_LOST_MARKER
does not exist it creates it and binds TAKEN_PORT (a port the test holds open), failing as an arm
does whose port was taken between the harness picking it and the arm binding it."""

from __future__ import annotations

import os
from pathlib import Path

from arms.server import main
from arms.toy import ToyArm

if __name__ == "__main__":
    marker = Path(os.environ["PORT_LOST_MARKER"])
    if marker.exists():
        main(ToyArm)
    else:
        marker.write_text("lost")
        main(ToyArm, ["--port", os.environ["TAKEN_PORT"]])
