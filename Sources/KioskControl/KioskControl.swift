import KioskCore
