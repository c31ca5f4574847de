"""`python -m arms.bare [--host H] [--port P]`: serve the bare arm over the seam."""

from arms.bare import BareArm
from arms.server import main

if __name__ == "__main__":
    main(BareArm)
